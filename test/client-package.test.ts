import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { installOffline, packClient, root, run, tsc } from './helpers/client-package.js'

// The typed client as an integrator gets it: packed (`npm pack`, which builds it), installed from the tarball into a
// fresh project, and compiled there with `--strict` and `skipLibCheck: false`. Its dependencies are packed from this
// checkout's node_modules, so the install runs offline.

/** The ```ts blocks of a document that use the client: they must compile as written. */
export function readmeExamples(readme: string): string[] {
  return [...readme.matchAll(/```ts\n([\s\S]*?)```/g)]
    .map((m) => m[1])
    .filter((code) => code.includes("'hostapi-client'"))
}

const good = `
import { createHostapiAdminClient, createHostapiClient, HostapiError } from 'hostapi-client'

const api = createHostapiClient({ baseUrl: 'https://localhost:8443', apiKey: 'key', ca: '-----BEGIN CERTIFICATE-----' })
const { data } = await api.GET('/api/v2/domains/{domain}/dns', { params: { path: { domain: 'example.nl' } } })
const types: string[] = data.data.records.map((r) => r.type)
await api.PATCH('/api/v2/domains/{domain}/dns', {
  params: { path: { domain: 'example.nl' } },
  body: { record: { type: 'A', name: 'www.example.nl.', value: '192.0.2.1', ttl: 3600 } },
  test: true,
})
const order = await api.POST('/api/v2/domains/order', { body: { domain: 'example.nl' }, idempotencyKey: 'o-1' })
const id: number = order.data.data.order_id
const admin = createHostapiAdminClient({ baseUrl: 'https://localhost:8443', token: 'adm_x' })
await admin.POST('/sandbox/clock', { body: { advance: '30d' } })
try {
  await api.GET('/api/v2/orders/{order_id}', { params: { path: { order_id: id } } })
} catch (e) {
  if (e instanceof HostapiError) console.log(e.status, e.status_description, types)
}
`

// A path that does not exist, and a body field spelled wrong: each must fail to compile.
const badPath = `
import { createHostapiClient } from 'hostapi-client'
const api = createHostapiClient({ baseUrl: 'https://localhost:8443', apiKey: 'key' })
await api.GET('/api/v2/domain')
`
const badField = `
import { createHostapiClient } from 'hostapi-client'
const api = createHostapiClient({ baseUrl: 'https://localhost:8443', apiKey: 'key' })
await api.POST('/api/v2/domains/order', { body: { domian: 'example.nl' } })
`
const badAdminPath = `
import { createHostapiAdminClient } from 'hostapi-client'
const admin = createHostapiAdminClient({ baseUrl: 'https://localhost:8443', token: 'adm_x' })
await admin.POST('/sandbox/clocks', { body: { advance: '30d' } })
`

describe('hostapi-client as a package: packed, installed from the tarball, compiled strictly', () => {
  let dir: string
  let errors: string[]
  // The integrators' guide shows the client.
  const readme = readmeExamples(fs.readFileSync(path.join(root, 'docs', 'integrators.md'), 'utf8'))

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostapi-client-consumer-'))
    const dependencies = await packClient(dir)
    fs.writeFileSync(
      path.join(dir, 'package.json'),
      JSON.stringify({ name: 'consumer', private: true, type: 'module', dependencies }),
    )
    await installOffline(dir)
    fs.writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          skipLibCheck: false,
          noEmit: true,
          lib: ['ES2022', 'DOM', 'DOM.Iterable'],
          typeRoots: [path.join(root, 'node_modules/@types')],
          types: ['node'],
        },
        include: ['*.ts'],
      }),
    )
    const files: Record<string, string> = { 'good.ts': good, 'bad-path.ts': badPath, 'bad-field.ts': badField }
    files['bad-admin-path.ts'] = badAdminPath
    readme.forEach((code, i) => {
      files[`readme-${i + 1}.ts`] = code
    })
    for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text)
    const out = await run(process.execPath, [tsc, '-p', dir], { cwd: dir }).then(
      (r) => r.stdout,
      (e: { stdout: string }) => e.stdout,
    )
    errors = out.split('\n').filter((line) => /error TS\d+/.test(line))
  })
  after(() => fs.rmSync(dir, { recursive: true, force: true }))

  /** The lines (1-based) of `file` tsc reports an error on. */
  const errorLines = (file: string) =>
    errors
      .filter((line) => line.startsWith(`${file}(`))
      .map((line) => Number(line.slice(file.length + 1).split(',')[0]))

  it('installs with its types: dist carries every declaration file index.d.ts imports', () => {
    const dist = path.join(dir, 'node_modules/hostapi-client/dist')
    for (const name of ['index', 'schema', 'admin-schema', 'https-fetch'])
      assert.ok(fs.existsSync(path.join(dist, `${name}.d.ts`)), `dist/${name}.d.ts is in the package`)
  })

  it('a correct script using both clients compiles, and the examples of docs/integrators.md compile as written', () => {
    assert.ok(readme.length >= 2, 'docs/integrators.md shows the client')
    const unexpected = errors.filter((line) => !line.startsWith('bad-'))
    assert.deepEqual(unexpected, [])
  })

  // Each bad script's last line holds its one mistake: the compiler reports it there, and nowhere else.
  it('a misspelled path fails to compile (customer and admin client)', () => {
    assert.deepEqual(errorLines('bad-path.ts'), [4])
    assert.deepEqual(errorLines('bad-admin-path.ts'), [4])
  })

  it('a misspelled body field fails to compile', () => {
    assert.deepEqual(errorLines('bad-field.ts'), [4])
    assert.match(errors.join('\n'), /bad-field\.ts.*'domian' does not exist/)
  })
})
