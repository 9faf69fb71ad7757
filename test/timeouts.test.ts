import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import net from 'node:net'
import tls from 'node:tls'
import { once } from 'node:events'
import { startTestApp, type TestApp } from './helpers/app.js'
import { eventually, pace, withDeadline } from './helpers/wait.js'
import { ConfigError, loadConfig } from '../src/config/config.js'

// Slow clients over real sockets on every listener (HTTPS API, admin port, plain HTTP behind a trusted proxy): the
// time limits and the per-address connection cap. Loopback is 127.0.0.0/8, so each test sends from addresses of its
// own (`localAddress`) and the tests of one app run at once without sharing a count.

const ADMIN_TOKEN = `adm_${'T'.repeat(32)}`
/** The trusted proxies: the plain-HTTP listener serves requests from these only. */
const PROXIES = '127.0.3.0/24'
/** Time a limit may be overrun on this shared machine (Node checks deadlines on a timer, the CPU is busy). */
const SLACK = 3500

const KINDS = ['api', 'admin', 'plain'] as const
type Kind = (typeof KINDS)[number]

/** One listener of a running app, and what a served request looks like on it. */
interface Listener {
  kind: Kind
  port: number
  tls: boolean
  /** The address a served request comes from (the plain listener serves the trusted proxy only). */
  from: string
  /** Head lines a served request carries: credential, and `X-Forwarded-Proto: https` through the proxy. */
  headers: string
  /** A request with a JSON body the listener's routes read and answer 200: method and path, and the body. */
  upload(): { line: string; body: object }
  /** A GET answered 200. */
  get: string
}

function listenersOf(t: TestApp, key: string, email: string): Listener[] {
  const port = (url: string) => Number(new URL(url).port)
  const profile = () => ({
    line: 'PUT /api/v2/account/profile',
    body: {
      firstname: 'Jan',
      lastname: 'Jansen',
      address: 'Stationsstraat',
      house_number: '12a',
      zipcode: '1234 ab',
      city: 'Amsterdam',
      country_code: 'nl',
      phone: '201234567',
      phone_country_code: '+31',
      email,
    },
  })
  let n = 0
  return [
    {
      kind: 'api',
      port: port(t.origin),
      tls: true,
      from: '127.0.0.1',
      headers: `Api-Key: ${key}\r\n`,
      upload: profile,
      get: '/api/v2/whoami',
    },
    {
      kind: 'admin',
      port: port(t.server.adminUrl),
      tls: true,
      from: '127.0.0.1',
      headers: `Authorization: Bearer ${ADMIN_TOKEN}\r\n`,
      upload: () => ({
        line: 'POST /admin/v1/accounts',
        body: { name: 'Upload B.V.', email: `upload${++n}-${Date.now()}@example.com` },
      }),
      get: '/admin/v1/accounts',
    },
    {
      kind: 'plain',
      port: port(t.server.httpUrl!),
      tls: false,
      from: '127.0.3.1',
      headers: `Api-Key: ${key}\r\nX-Forwarded-Proto: https\r\n`,
      upload: profile,
      get: '/api/v2/whoami',
    },
  ]
}

/** One test per listener, named after it; `fn` gets the listener (and its number) once the suite's app runs. */
function eachListener(
  all: () => Listener[],
  name: string,
  fn: (l: Listener, i: number) => Promise<void>,
  kinds: readonly Kind[] = KINDS,
): void {
  for (const [i, kind] of KINDS.entries())
    if (kinds.includes(kind)) it(`${name} (${kind})`, () => fn(all().find((l) => l.kind === kind)!, i))
}

/** A connection as the test sees it: what came in, when the server ended its side, when it closed. */
interface Conn {
  socket: net.Socket
  received(): Buffer
  ended: Promise<void>
  closed: Promise<void>
}

/** Every client socket of this file, destroyed before an app closes (a failed test leaves its sockets open). */
const opened = new Set<net.Socket>()
const destroyOpened = () => {
  for (const socket of opened) socket.destroy()
  opened.clear()
}

function watch(socket: net.Socket): Conn {
  opened.add(socket)
  socket.once('close', () => opened.delete(socket))
  const chunks: Buffer[] = []
  socket.on('data', (c: Buffer) => chunks.push(c))
  socket.on('error', () => undefined)
  // Not events.once: it rejects on 'error', and a reset is one way a connection closes here.
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
  const ended = new Promise<void>((resolve) => socket.once('end', () => resolve()))
  return { socket, received: () => Buffer.concat(chunks), ended: Promise.race([ended, closed]), closed }
}

/**
 * Opens a connection from `from`: through TLS on the TLS listeners unless `raw`, which stops at TCP (a client that
 * never starts or never finishes the handshake). `halfOpen` keeps the client's side open after the server ends its.
 */
async function open(l: Listener, from: string, opts: { raw?: boolean; halfOpen?: boolean } = {}): Promise<Conn> {
  const tcp = net.connect({ host: '127.0.0.1', port: l.port, localAddress: from, allowHalfOpen: opts.halfOpen })
  opened.add(tcp)
  await once(tcp, 'connect')
  if (!l.tls || opts.raw) return watch(tcp)
  const secure = tls.connect({ socket: tcp, rejectUnauthorized: false, servername: 'localhost' })
  await once(secure, 'secureConnect')
  return watch(secure)
}

/** Resolves with how long `p` took, or fails naming `what` when it takes longer than `ms`. */
async function within(p: Promise<unknown>, ms: number, what: string): Promise<number> {
  const start = Date.now()
  await withDeadline(p, ms, what)
  return Date.now() - start
}

/** Writes `next()` every `ms` until the connection ends or closes. */
function trickle(c: Conn, ms: number, next: (i: number) => string | Buffer): void {
  let i = 0
  const timer = setInterval(() => {
    if (c.socket.destroyed || !c.socket.writable) clearInterval(timer)
    else c.socket.write(next(i++))
  }, ms)
  c.closed.then(() => clearInterval(timer))
}

/** The first response in `buf`: status and envelope body (null when no complete response came). */
function response(buf: Buffer): { status: number; body: { status?: number; status_description?: string } } | null {
  const raw = buf.toString('latin1')
  const end = raw.indexOf('\r\n\r\n')
  if (end < 0) return null
  const head = raw.slice(0, end)
  const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? Number.NaN)
  const body = buf.subarray(end + 4, end + 4 + length).toString('utf8')
  if (body.length < length) return null
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), body: JSON.parse(body) }
}

function assert408(c: Conn, kind: Kind) {
  const r = response(c.received())
  assert.ok(r, `${kind}: an answer, got ${JSON.stringify(c.received().toString('latin1').slice(0, 200))}`)
  assert.equal(r.status, 408, kind)
  assert.deepEqual(r.body, {
    status: 408,
    status_description: 'Request timeout: the request was not received in time',
  })
}

/** Sends one complete request on `c` and waits for its whole answer. */
async function exchange(c: Conn, request: string): Promise<NonNullable<ReturnType<typeof response>>> {
  const before = c.received().length
  c.socket.write(request)
  return eventually(() => response(c.received().subarray(before)) ?? false, {
    what: 'the whole answer',
    intervalMs: 10,
    failIf: () => c.socket.destroyed && `no answer: ${c.received().subarray(before).toString('latin1')}`,
  })
}

const HEADERS_MS = 600
const REQUEST_MS = 4000
const IDLE_MS = 400
const HANDSHAKE_MS = 600

/**
 * The suite's app, with all three listeners and the settings of `env`, started before its tests (with an account
 * whose key the listeners send) and closed after them; answers the listeners once it runs.
 */
function suiteListeners(env: Record<string, string>): () => Listener[] {
  let t: TestApp
  let listeners: Listener[]
  before(async () => {
    t = await startTestApp('sqlite', {
      env: {
        HOSTAPI_HTTP_PORT: '0',
        HOSTAPI_ADMIN_PORT: '0',
        HOSTAPI_ADMIN_TOKEN: ADMIN_TOKEN,
        HOSTAPI_TRUSTED_PROXIES: PROXIES,
        ...env,
      },
    })
    const a = await t.account()
    const me = await t.request('GET', '/account/profile', { key: a.key })
    listeners = listenersOf(t, a.key, me.body.data.email)
  })
  after(async () => {
    destroyOpened()
    await t.close()
  })
  return () => listeners
}

describe('time limits on every listener', { concurrency: true }, () => {
  const listeners = suiteListeners({
    HOSTAPI_BODY_LIMIT: String(2 * 1024 * 1024),
    HOSTAPI_HEADERS_TIMEOUT_MS: String(HEADERS_MS),
    HOSTAPI_REQUEST_TIMEOUT_MS: String(REQUEST_MS),
    HOSTAPI_IDLE_TIMEOUT_MS: String(IDLE_MS),
    HOSTAPI_TLS_HANDSHAKE_TIMEOUT_MS: String(HANDSHAKE_MS),
  })
  const each = (name: string, fn: (l: Listener) => Promise<void>, kinds: readonly Kind[] = KINDS) =>
    eachListener(listeners, name, fn, kinds)

  each('answers a head sent a line at a time with 408 in the envelope after the headers timeout', async (l) => {
    const c = await open(l, l.from)
    c.socket.write('GET /api/v2/whoami HTTP/1.1\r\nHost: x\r\n')
    trickle(c, 200, (i) => `X-Slow-${i}: a\r\n`)
    const ms = await within(c.ended, HEADERS_MS + SLACK, `${l.kind}: end of a slow head`)
    assert.ok(ms >= HEADERS_MS - 100, `${l.kind}: ended after ${ms} ms, before the headers timeout`)
    assert408(c, l.kind)
  })

  each('closes a connection that keeps sending after its 408, at the latest 10 s after the answer', async (l) => {
    const c = await open(l, l.from, { halfOpen: true })
    c.socket.write('GET /api/v2/whoami HTTP/1.1\r\nHost: x\r\n')
    trickle(c, 200, (i) => `X-Slow-${i}: a\r\n`)
    await within(c.ended, HEADERS_MS + SLACK, `${l.kind}: end of a slow head`)
    assert408(c, l.kind)
    // The client still sends, a line every 200 ms, and never ends its side.
    await within(c.closed, 10_000 + SLACK, `${l.kind}: close of a connection trickling after its answer`)
  })

  each('answers a body sent a byte at a time with 408 in the envelope after the request timeout', async (l) => {
    const { line } = l.upload()
    const c = await open(l, l.from)
    c.socket.write(
      `${line} HTTP/1.1\r\nHost: x\r\n${l.headers}Content-Type: application/json\r\nContent-Length: 500\r\n\r\n{`,
    )
    trickle(c, 200, () => ' ')
    const ms = await within(c.ended, REQUEST_MS + SLACK, `${l.kind}: end of a slow body`)
    assert.ok(ms >= REQUEST_MS - 100, `${l.kind}: ended after ${ms} ms, before the request timeout`)
    assert408(c, l.kind)
  })

  each(
    'serves a large upload sent within the request timeout though it takes longer than the headers timeout',
    async (l) => {
      const { line, body } = l.upload()
      // 1.5 MiB: the JSON body padded with spaces, sent in ten parts 150 ms apart (1.35 s, over the headers timeout).
      const json = Buffer.from(`${JSON.stringify(body)}${' '.repeat(1.5 * 1024 * 1024)}`)
      const c = await open(l, l.from)
      c.socket.write(`${line} HTTP/1.1\r\nHost: x\r\n${l.headers}Content-Type: application/json\r\n`)
      c.socket.write(`Content-Length: ${json.length}\r\n\r\n`)
      const part = Math.ceil(json.length / 10)
      for (let at = 0; at < json.length; at += part) {
        await pace(150)
        c.socket.write(json.subarray(at, at + part))
      }
      const r = await exchange(c, '')
      assert.equal(r.status, 200, `${l.kind}: ${JSON.stringify(r.body)}`)
      c.socket.destroy()
    },
  )

  each('closes a kept-alive connection idle for the idle timeout', async (l) => {
    const c = await open(l, l.from)
    const r = await exchange(c, `GET ${l.get} HTTP/1.1\r\nHost: x\r\n${l.headers}\r\n`)
    assert.equal(r.status, 200, `${l.kind}: ${JSON.stringify(r.body)}`)
    const ms = await within(c.closed, IDLE_MS + SLACK, `${l.kind}: close of an idle connection`)
    assert.ok(ms >= IDLE_MS - 100, `${l.kind}: closed after ${ms} ms, before the idle timeout`)
  })

  each('closes a connection that never sends a byte', async (l) => {
    const c = await open(l, l.from, { raw: true })
    await within(c.closed, Math.max(HEADERS_MS, HANDSHAKE_MS) + SLACK, `${l.kind}: close of a silent connection`)
    // The plain listener has no handshake: its silent connection is a request whose head never comes.
    if (!l.tls) assert408(c, l.kind)
  })

  each(
    'closes a TLS connection whose handshake never finishes, sent slowly or cut short',
    async (l) => {
      // A TLS record header announcing a 512-byte handshake message, then a byte every 100 ms.
      const slow = await open(l, l.from, { raw: true })
      slow.socket.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01]))
      trickle(slow, 100, () => Buffer.from([0x00]))
      // A record that stops halfway and a client that waits.
      const cut = await open(l, l.from, { raw: true })
      cut.socket.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]))
      await within(slow.closed, HANDSHAKE_MS + SLACK, `${l.kind}: close of a slow handshake`)
      await within(cut.closed, HANDSHAKE_MS + SLACK, `${l.kind}: close of an unfinished handshake`)
    },
    ['api', 'admin'],
  )
})

describe('connections per client address', { concurrency: true }, () => {
  const CAP = 4
  const listeners = suiteListeners({ HOSTAPI_MAX_CONNECTIONS_PER_IP: String(CAP) })

  /** Whether a new connection from `from` is served: some answer to a request (the plain listener's may be a 400). */
  const served = async (l: Listener, from: string): Promise<boolean> => {
    let c: Conn
    try {
      c = await open(l, from)
    } catch {
      return false // reset during the TLS handshake
    }
    c.socket.write(`GET ${l.get} HTTP/1.1\r\nHost: x\r\n${l.headers}Connection: close\r\n\r\n`)
    await c.closed
    return response(c.received()) !== null
  }

  /**
   * Opens `n` kept-alive connections from `from`, each after one request answered: the server has then counted it
   * (a TCP connect alone returns before the server has taken the connection).
   */
  const hold = async (l: Listener, from: string, n: number) => {
    const held: Conn[] = []
    for (let i = 0; i < n; i++) {
      const c = await open(l, from)
      await exchange(c, `GET ${l.get} HTTP/1.1\r\nHost: x\r\n${l.headers}\r\n`)
      held.push(c)
    }
    return held
  }

  const each = (name: string, fn: (l: Listener, i: number) => Promise<void>) => eachListener(listeners, name, fn)

  each(
    'refuses the connection past the cap from one address at once, while another address still connects',
    async (l, i) => {
      const [one, other] = [`127.0.${10 + i}.1`, `127.0.${10 + i}.2`]
      const held = await hold(l, one, CAP)
      assert.equal(await served(l, one), false, `${l.kind}: connection ${CAP + 1} from ${one} refused`)
      assert.equal(await served(l, other), true, `${l.kind}: ${other} still served`)
      for (const c of held) assert.ok(!c.socket.destroyed, `${l.kind}: the held connections stay open`)
      // A connection closed makes room for one more.
      held[0].socket.destroy()
      await eventually(() => served(l, one), {
        what: `${l.kind}: served again once one of its connections closed`,
        timeoutMs: 1000,
      })
      for (const c of held) c.socket.destroy()
    },
  )

  it('counts the connections of one address over all listeners together', async () => {
    const from = '127.0.20.1'
    const [api, admin, plain] = listeners()
    const held = [...(await hold(api, from, CAP - 2)), ...(await hold(admin, from, 1)), ...(await hold(plain, from, 1))]
    for (const l of listeners())
      assert.equal(await served(l, from), false, `${l.kind}: past the cap over all listeners`)
    for (const c of held) c.socket.destroy()
  })

  each('caps a client address but not a trusted proxy, which carries many clients', async (l, i) => {
    const [client, proxy] = [`127.0.${30 + i}.1`, `127.0.3.${10 + i}`]
    const held = [...(await hold(l, client, CAP)), ...(await hold(l, proxy, CAP + 2))]
    assert.equal(await served(l, client), false, `${l.kind}: the client past the cap`)
    assert.equal(await served(l, proxy), true, `${l.kind}: the proxy past the cap`)
    for (const c of held) c.socket.destroy()
  })
})

describe('connection settings', () => {
  it('defaults to 10 s for the head, 120 s for the request, 30 s idle, 10 s for TLS and 64 connections per address', () => {
    assert.deepEqual(loadConfig({}).connections, {
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 120_000,
      idleTimeoutMs: 30_000,
      tlsHandshakeTimeoutMs: 10_000,
      maxPerAddress: 64,
    })
  })

  it('lists every bad value at once, and a request timeout shorter than the headers timeout', () => {
    const env = {
      HOSTAPI_HEADERS_TIMEOUT_MS: '0',
      HOSTAPI_IDLE_TIMEOUT_MS: 'soon',
      HOSTAPI_TLS_HANDSHAKE_TIMEOUT_MS: '-5',
      HOSTAPI_MAX_CONNECTIONS_PER_IP: '1.5',
    }
    assert.throws(
      () => loadConfig(env),
      (e: unknown) => {
        assert.ok(e instanceof ConfigError)
        for (const name of Object.keys(env))
          assert.ok(
            e.problems.some((p) => p.startsWith(`${name} must be`)),
            name,
          )
        return true
      },
    )
    assert.throws(
      () => loadConfig({ HOSTAPI_HEADERS_TIMEOUT_MS: '20000', HOSTAPI_REQUEST_TIMEOUT_MS: '15000' }),
      /HOSTAPI_REQUEST_TIMEOUT_MS must not be less than HOSTAPI_HEADERS_TIMEOUT_MS/,
    )
  })
})
