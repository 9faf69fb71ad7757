import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'

// The tree is built in one-way layers: lib <- db/ops <- drivers/modules/jobs <- http <- app/server/cli.
// An import may point to its own layer or a lower one, never to a higher one. A module's routes and request/reply
// schemas (*.routes.ts, *.schemas.ts) are its HTTP face and belong to the http layer; its services, rules and
// repositories may not import them. A module's wiring (area.ts: its services built, its route plugins registered)
// imports its routes, so it belongs to the http layer too.
const root = new URL('..', import.meta.url).pathname
const src = path.join(root, 'src')

const LAYER_NAMES = ['lib', 'db/ops', 'drivers/modules', 'http', 'top'] as const

/** The layer of a file, by its path relative to src/. */
export function layerOf(rel: string): number {
  const p = rel.split(path.sep).join('/')
  const base = p.slice(p.lastIndexOf('/') + 1)
  // Used everywhere and free of upward imports: the lowest layer. The configuration is pure (environment in, object out).
  if (p.startsWith('lib/') || p.startsWith('config/') || ['errors.ts', 'clock.ts', 'lazy-require.ts'].includes(p))
    return 0
  // The row types of a module's tables sit beside the module but describe the database. Operating state (metrics,
  // fault injection, the request journal) is used by the HTTP plugins and the admin routes alike.
  if (p.startsWith('db/') || p.startsWith('ops/') || base.endsWith('.tables.ts')) return 1
  // The demo data of a module is loaded by the seeder of the composition root.
  if (base.endsWith('.seed.ts')) return 4
  // A module's HTTP face and its wiring.
  if (p.startsWith('modules/') && (/\.routes\.ts$|\.schemas\.ts$/.test(base) || base === 'area.ts')) return 3
  if (p.startsWith('drivers/') || p.startsWith('modules/') || p.startsWith('jobs/')) return 2
  if (p.startsWith('http/')) return 3
  // The composition root: app, server, CLI, context, seeding, data directory, secret key, TLS.
  return 4
}

function sourceFiles(dir: string): string[] {
  const out: string[] = []
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) out.push(...sourceFiles(full))
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') && !entry.name.endsWith('.test.ts'))
      out.push(full)
  }
  return out
}

const SPECIFIER =
  /(?:\bimport|\bexport)\s[^'"]*?\bfrom\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)|\bimport\s+['"]([^'"]+)['"]/g

/** Every relative import of a file, resolved to a path relative to src/ (or outside it). */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8')
  const out: string[] = []
  for (const m of text.matchAll(SPECIFIER)) {
    const spec = m[1] ?? m[2] ?? m[3]
    if (spec === undefined || !spec.startsWith('.')) continue
    const target = path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts'))
    out.push(path.relative(src, target))
  }
  return out
}

/** The strongly connected components of more than one file (Tarjan): each is a set of files importing each other. */
function stronglyConnected(graph: Map<string, string[]>): string[][] {
  let next = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const out: string[][] = []
  const visit = (v: string) => {
    index.set(v, next)
    low.set(v, next)
    next++
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0))
    }
    if (low.get(v) !== index.get(v)) return
    const component: string[] = []
    for (let w = stack.pop(); w !== undefined; w = stack.pop()) {
      onStack.delete(w)
      component.push(w)
      if (w === v) break
    }
    if (component.length > 1) out.push(component)
  }
  for (const v of graph.keys()) if (!index.has(v)) visit(v)
  return out
}

/** Upward imports not yet removed; each one is a debt, and the list only shrinks. */
const EXCEPTIONS: string[] = []

describe('layers', () => {
  it('no file under src/ imports from a higher layer', () => {
    const violations: string[] = []
    for (const file of sourceFiles(src)) {
      const rel = path.relative(src, file)
      const from = layerOf(rel)
      for (const target of importsOf(file)) {
        if (target.startsWith('..')) continue
        const to = layerOf(target)
        if (to > from) violations.push(`${rel} (${LAYER_NAMES[from]}) -> ${target} (${LAYER_NAMES[to]})`)
      }
    }
    if (process.env.LAYERS_LIST) console.log(violations.sort().join('\n'))
    assert.deepEqual(violations.sort(), [...EXCEPTIONS].sort())
  })

  it('no import cycle under src/, type-only imports included', () => {
    const graph = new Map<string, string[]>()
    for (const file of sourceFiles(src)) {
      const rel = path.relative(src, file)
      graph.set(rel, [...new Set(importsOf(file).filter((t) => !t.startsWith('..')))])
    }
    const cycles = stronglyConnected(graph).map((c) => c.sort().join(' <-> '))
    assert.deepEqual(cycles.sort(), [])
  })

  it('no file under src/ is longer than 450 lines', () => {
    const long = sourceFiles(src)
      .map((file) => ({ file: path.relative(src, file), lines: fs.readFileSync(file, 'utf8').split('\n').length - 1 }))
      .filter((f) => f.lines > 450)
    assert.deepEqual(long, [])
  })

  // Test files split by subject, shared setup in test/helpers. Still over the cap, to be split: FAR_OVER.
  const FAR_OVER = ['fault-suite.test.ts']
  it('no file under test/ is longer than 450 lines', () => {
    const testDir = path.join(root, 'test')
    const files = (dir: string): string[] =>
      fs
        .readdirSync(dir, { withFileTypes: true })
        .flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : [path.join(dir, e.name)]))
        .filter((file) => file.endsWith('.ts'))
    const long = files(testDir)
      .map((file) => ({
        file: path.relative(testDir, file),
        lines: fs.readFileSync(file, 'utf8').split('\n').length - 1,
      }))
      .filter((f) => f.lines > 450 && !FAR_OVER.includes(f.file))
    assert.deepEqual(long, [])
  })
})
