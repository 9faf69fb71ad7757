import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { errorListenerOffences, loadersOf } from './helpers/error-listeners.js'
import { sourceFiles } from './helpers/source-files.js'

// Every object src/ creates that can emit 'error' (a child process, a cluster worker, a socket, a server, a stream, a
// database or Redis client, a worker pool, a mail transport) gets an 'error' listener where it is created, or is
// handed to something that takes its errors (stream.pipeline/finished, events.once/on). An 'error' event no one
// listens to is thrown: a refused connection or a child that died would end the whole server. A site that is right
// for another reason says why in a comment `// error-listener: <reason>` on its statement or just above it.
const root = new URL('..', import.meta.url).pathname
const src = path.join(root, 'src')

const check = (source: string, loaders?: Map<string, string>) =>
  errorListenerOffences('/x/src/a.ts', source, loaders).map((o) => `${o.line} ${o.what}: ${o.why}`)

describe('error listeners', () => {
  it('finds creations without an error listener (the rule below can fail)', () => {
    assert.deepEqual(
      check(
        [
          "import { fork, execFile } from 'node:child_process'",
          "import net from 'node:net'",
          "import * as http from 'node:http'",
          'export function f() {',
          "  const child = fork('x')",
          "  child.on('exit', () => undefined)",
          '  net.connect(53)',
          "  execFile('x', [])",
          '  const req = http.get(url)',
          "  req.once('timeout', () => req.destroy())",
          '}',
        ].join('\n'),
      ),
      [
        "5 child_process.fork: child gets no 'error' listener",
        '7 net.connect: it is not held, so nothing can listen to it',
        '8 child_process.execFile: it is not held, so nothing can listen to it',
        "9 http.get: req gets no 'error' listener",
      ],
    )
    assert.deepEqual(
      check(
        [
          "import cluster from 'node:cluster'",
          "import { lazyRequire } from './lazy-require.js'",
          "import { loadPg } from './db.js'",
          "const piscina = lazyRequire<typeof import('piscina')>('piscina')",
          'class P {',
          '  run() {',
          '    this.pool ??= new (piscina().Piscina)({})',
          '    return cluster.fork()',
          '  }',
          '  client() { const c = new (loadPg().Client)({}); return c }',
          '}',
        ].join('\n'),
        new Map([['/x/src/db.ts#loadPg', 'pg']]),
      ),
      [
        "7 piscina.Piscina: this.pool gets no 'error' listener",
        '8 cluster.fork: it is returned: listen where it is created, or mark it',
        "10 pg.Client: c gets no 'error' listener",
      ],
    )
  })

  it('accepts a listener, a chained one, a taker, a callback and a reason; holds a callback socket to the rule', () => {
    assert.deepEqual(
      check(
        [
          "import { fork, execFile } from 'node:child_process'",
          "import fs from 'node:fs'",
          "import net from 'node:net'",
          "import { pipeline } from 'node:stream/promises'",
          "import { once } from 'node:events'",
          'export async function f(secure: boolean) {',
          "  const child = fork('x')",
          "  child.on('error', (e) => log(e))",
          "  net.connect(53).setNoDelay(true).once('error', () => undefined)",
          "  execFile('x', [], (err) => log(err))",
          "  await pipeline(fs.createReadStream('a'), fs.createWriteStream('b'))",
          '  const server = net.createServer()',
          "  await once(server, 'listening')",
          '  let req',
          '  const go = () => {',
          '    req = net.connect(1)',
          '  }',
          "  req?.on('error', () => undefined)",
          '  // error-listener: the caller listens before the first tick',
          '  return net.connect(2)',
          '}',
        ].join('\n'),
      ),
      [],
    )
    // The socket a raw server hands its connection listener, and a request's response, are held to the rule too:
    // listened to in the callback, or in the function of the file it is handed to.
    assert.deepEqual(
      check(
        [
          "import net from 'node:net'",
          "import https from 'node:https'",
          'class S {',
          '  start() {',
          '    const a = net.createServer((socket) => this.serve(socket))',
          "    a.on('error', () => undefined)",
          "    const b = net.createServer((socket) => socket.on('error', () => socket.destroy()))",
          "    b.on('error', () => undefined)",
          "    const c = net.createServer((socket) => socket.end('x'))",
          "    c.on('error', () => undefined)",
          "    const req = https.get(url, (res) => res.on('data', () => undefined))",
          "    req.on('error', () => undefined)",
          '  }',
          "  serve(conn: net.Socket) { conn.on('error', () => conn.destroy()) }",
          '}',
        ].join('\n'),
      ),
      [
        "9 net.createServer: the connection socket gets no 'error' listener",
        "11 https.get: the response gets no 'error' listener",
      ],
    )
    // A comment without a reason is no reason.
    assert.equal(check("import net from 'node:net'\n// error-listener:\nnet.connect(2)").length, 1)
  })

  it("every object src/ creates that can emit 'error' is listened to", () => {
    const files = sourceFiles(src)
    const loaders = new Map<string, string>()
    for (const file of files) for (const [k, v] of loadersOf(file, fs.readFileSync(file, 'utf8'))) loaders.set(k, v)
    assert.ok([...loaders.values()].includes('pg'), 'the loader of pg (loadPg) is found')
    const offences: string[] = []
    let sites = 0
    for (const file of files) {
      const text = fs.readFileSync(file, 'utf8')
      for (const o of errorListenerOffences(file, text, loaders))
        offences.push(`src/${path.relative(src, file)}:${o.line} ${o.what}: ${o.why}`)
      sites += errorListenerOffences(file, text.replace(/\.(on|once)\('error'/g, '.$1($error'), loaders).length
    }
    // The rule sees the sites it guards: with every listener taken away, each creation would be reported.
    assert.ok(sites >= 15, `only ${sites} creations of an error emitter found under src/`)
    assert.deepEqual(offences, [])
  })
})
