#!/usr/bin/env node
// The `hostapi` command. `npm run build` also writes the whole command line as one file (cli.bundle.cjs) with
// V8's code cache of it: it starts in a fraction of the time the hundreds of modules it holds take to load.
// It runs only while it matches, file for file, what it was made from; otherwise (after a plain `tsc`, or
// under tsx) the modules run as they are.
import { runBundle } from './bundle.js'

if (!runBundle(new URL('./cli.bundle.json', import.meta.url))) await import('./cli.js')
