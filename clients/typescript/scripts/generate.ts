// Regenerates src/schema.d.ts from the committed openapi.json (`npm run client:generate` at the root).
import fs from 'node:fs'
import { generateSchema, schemaFile } from './schema.js'

fs.writeFileSync(schemaFile, await generateSchema())
process.stdout.write('clients/typescript/src/schema.d.ts written\n')
