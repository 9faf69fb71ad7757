// Regenerates src/schema.ts and src/admin-schema.ts from the committed openapi.json and openapi-admin.json
// (`npm run client:generate` at the root).
import fs from 'node:fs'
import { generatedFiles, generateSchema } from './schema.js'

for (const { file, source } of generatedFiles) {
  fs.writeFileSync(file, await generateSchema(source))
  process.stdout.write(`${new URL(file).pathname.split('/').slice(-3).join('/')} written\n`)
}
