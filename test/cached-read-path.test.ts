// The path of a cached read waits for nothing: generated from the route table, every route with `config.cache` is
// read twice, then read again while async_hooks counts the promises the process makes until the answer is in; both
// where the read is answered before routing and where Fastify's hooks answer it (behind a trusted proxy). On
// SQLite (the data version is read without I/O) and with the limits in memory, a cached answer needs none; a hook
// that returns a promise, or awaits one, adds microtask turns to every read (the async rate limiter this replaced
// cost about a tenth of a cached read's CPU). The request is sent on a raw TLS socket, whose callbacks make no
// promise of their own.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { createHook } from 'node:async_hooks'
import tls from 'node:tls'
import { startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { fixtures } from './helpers/fixtures.js'
import { API_PREFIX } from '../src/http/constants.js'

/** Promises made by this process while `fn` runs until the promise it returns settles (counted from callbacks). */
function promisesDuring(fn: (done: () => void) => void): Promise<number> {
  let made = 0
  const hook = createHook({
    init(_id, type) {
      if (type === 'PROMISE') made++
    },
  })
  // The promise returned here, and the caller's await of it, are made before the hook is on; it settles after.
  let resolve!: (made: number) => void
  const result = new Promise<number>((r) => {
    resolve = r
  })
  setImmediate(() => {
    hook.enable()
    fn(() => {
      hook.disable()
      resolve(made)
    })
  })
  return result
}

/** An open keep-alive TLS connection that sends one request at a time and calls back when its answer is in. */
function connection(origin: string): Promise<{
  send(path: string, key: string, done: (status: number, body: string) => void): void
  close(): void
}> {
  const url = new URL(origin)
  return new Promise((resolve, reject) => {
    const socket = tls.connect(
      { host: url.hostname, port: Number(url.port), rejectUnauthorized: false, servername: 'localhost' },
      () =>
        resolve({
          send(path, key, done) {
            let buf = Buffer.alloc(0)
            const onData = (chunk: Buffer) => {
              buf = Buffer.concat([buf, chunk])
              const end = buf.indexOf('\r\n\r\n')
              if (end < 0) return
              const head = buf.subarray(0, end).toString('latin1')
              const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0)
              if (buf.length < end + 4 + length) return
              socket.off('data', onData)
              done(Number(head.slice(9, 12)), buf.subarray(end + 4, end + 4 + length).toString('utf8'))
            }
            socket.on('data', onData)
            socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nAPI-Key: ${key}\r\n\r\n`)
          },
          close: () => socket.destroy(),
        }),
    )
    socket.once('error', reject)
  })
}

// Answered before routing (src/http/early-answers.ts), and by Fastify's hooks where that is off (behind a proxy).
for (const [how, env] of [
  ['answered before routing', {}],
  ['answered by the route', { HOSTAPI_TRUSTED_PROXIES: '10.0.0.1' }],
] as [string, Record<string, string>][]) {
  describe(`a cached read makes no promise (SQLite, limits in memory, ${how})`, () => {
    let t: TestApp
    let a: TestAccount
    before(async () => {
      t = await startTestApp('sqlite', { env: { HOSTAPI_SANDBOX: '0', HOSTAPI_RATE_LIMIT: '100000', ...env } })
      a = await t.account('Cached Path B.V.')
    })
    after(() => t.close())

    it('for every route with config.cache', async () => {
      const routes = t.server.app.routeTable.filter(
        (r) => r.cache && r.method === 'GET' && r.url.startsWith(API_PREFIX),
      )
      assert.ok(routes.length >= 8, `cached routes found: ${routes.length}`)
      const conn = await connection(t.origin)
      try {
        for (const r of routes) {
          const { params } = r.fixture ? await fixtures[r.fixture](t, a, r) : { params: {} }
          const path = r.url.replace(/:([A-Za-z_]+)/g, (_m, name: string) => encodeURIComponent(params[name]))
          const first = await t.request('GET', path.slice(API_PREFIX.length), { key: a.key })
          assert.equal(first.status, 200, `${r.url}: ${first.text}`)
          // A timer of the app may run in the window; the fewest over a few reads is what the read itself makes.
          let fewest = Number.POSITIVE_INFINITY
          for (let i = 0; i < 5 && fewest > 0; i++) {
            let answer = { status: 0, body: '' }
            const made = await promisesDuring((done) =>
              conn.send(path, a.key, (status, body) => {
                answer = { status, body }
                done()
              }),
            )
            assert.equal(answer.status, 200, `${r.url}: ${answer.body}`)
            assert.equal(answer.body, first.text, `${r.url}: the cached answer is the one computed`)
            fewest = Math.min(fewest, made)
          }
          assert.equal(fewest, 0, `${r.method} ${r.url}: a cached read made ${fewest} promises`)
        }
      } finally {
        conn.close()
      }
    })
  })
}
