// Regenerates the committed openapi.json from the route schemas (`npm run openapi`).
import fs from 'node:fs'
import { openapiDocument, serialiseOpenapi } from '../src/openapi-document.js'

const doc = await openapiDocument()
fs.writeFileSync(new URL('../openapi.json', import.meta.url), serialiseOpenapi(doc))
process.stdout.write('openapi.json written\n')
