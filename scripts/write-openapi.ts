// Regenerates the committed openapi.json (customer API) and openapi-admin.json (admin API) from the route
// schemas (`npm run openapi`), then the typed client's types from them.
import fs from 'node:fs'
import { openapiDocuments, serialiseOpenapi } from '../src/openapi-document.js'

const { customer, admin } = await openapiDocuments()
fs.writeFileSync(new URL('../openapi.json', import.meta.url), serialiseOpenapi(customer))
fs.writeFileSync(new URL('../openapi-admin.json', import.meta.url), serialiseOpenapi(admin))
process.stdout.write('openapi.json and openapi-admin.json written\n')
