import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { once } from 'node:events'
import tls from 'node:tls'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'

import { parseRaw, rawRequest, type RawReply } from './helpers/raw-http.js'

const get = (path: string, headers = '') =>
  `GET ${path} HTTP/1.1\r\nHost: localhost\r\n${headers}Connection: close\r\n\r\n`

/** The envelope as JSON, with this status and (when given) this text. */
function assertEnvelope(r: RawReply, status: number, text?: string | RegExp) {
  assert.equal(r.status, status, r.text)
  assert.match(r.headers['content-type'] ?? '', /^application\/json/)
  const body = JSON.parse(r.text) as { status: number; status_description: string }
  assert.equal(body.status, status)
  assert.equal(typeof body.status_description, 'string')
  if (typeof text === 'string') assert.equal(body.status_description, text)
  else if (text) assert.match(body.status_description, text)
  assert.deepEqual(Object.keys(body).sort(), ['status', 'status_description'])
}

/** A valid 253-character domain name: four labels of 63 characters and `.com`... trimmed to 253. */
const longName = (length: number) => {
  const labels: string[] = []
  let rest = length - 4 // ".com"
  while (rest > 0) {
    const n = Math.min(63, rest - (labels.length ? 1 : 0))
    labels.push('a'.repeat(n))
    rest -= n + (labels.length > 1 ? 1 : 0)
  }
  return `${labels.join('.')}.com`
}

describe('every answer is the envelope as application/json', () => {
  let t: TestApp
  let a: TestAccount
  before(async () => {
    t = await startTestApp('sqlite', {
      env: { HOSTAPI_BODY_LIMIT: '2048', HOSTAPI_HTTP_PORT: '0', HOSTAPI_ADMIN_PORT: '0' },
    })
    a = await t.account()
  })
  after(() => t.close())

  /** The server still answers a normal request. */
  const stillAnswers = async () => {
    const r = await rawRequest(t.origin, get('/api/v2/whoami', `Api-Key: ${a.key}\r\n`))
    assert.equal(r.status, 200)
  }

  it('answers bad percent-escapes in the path with 400', async () => {
    for (const path of ['/api/v2/domains/%E0%A4%A', '/api/v2/%', '/api/v2/domains/%ZZ', '/api/v2/domains/%C0%AF/dns']) {
      assertEnvelope(await rawRequest(t.origin, get(path, `Api-Key: ${a.key}\r\n`)), 400, /^Invalid URL/)
      await stillAnswers()
    }
  })

  it('takes full-length domain names in the path and answers longer segments in the envelope', async () => {
    const name = longName(253)
    assert.equal(name.length, 253)
    const r = await rawRequest(t.origin, get(`/api/v2/domains/${name}`, `Api-Key: ${a.key}\r\n`))
    assertEnvelope(r, 400, 'You have no access to this resource')
    const dns = await rawRequest(t.origin, get(`/api/v2/domains/${name}/dns`, `Api-Key: ${a.key}\r\n`))
    assertEnvelope(dns, 400, 'You have no access to this resource')
    // A wrong method on such a path is still told apart from an unknown path.
    const wrong = await rawRequest(
      t.origin,
      `PATCH /api/v2/domains/${name}/auth-code HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    )
    assertEnvelope(wrong, 400, 'Wrong request method')
    const tooLong = await rawRequest(t.origin, get(`/api/v2/domains/${'a'.repeat(300)}.com`, `Api-Key: ${a.key}\r\n`))
    assertEnvelope(tooLong, 414, /^URI too long/)
    await stillAnswers()
  })

  it('answers oversized headers with 431 and malformed request lines with 400', async () => {
    assertEnvelope(
      await rawRequest(t.origin, get('/api/v2/whoami', `X-Big: ${'b'.repeat(20_000)}\r\n`)),
      431,
      /^Request headers too large/,
    )
    assertEnvelope(
      await rawRequest(t.origin, get(`/api/v2/whoami?q=${'q'.repeat(20_000)}`)),
      431,
      /^Request headers too large/,
    )
    assertEnvelope(await rawRequest(t.origin, 'GARBAGE\r\n\r\n'), 400, /^Malformed HTTP request/)
    assertEnvelope(
      await rawRequest(t.origin, 'GET /api/v2/whoami HTTP/9.9\r\nHost: x\r\n\r\n'),
      400,
      /^Malformed HTTP request/,
    )
    assertEnvelope(
      await rawRequest(t.origin, 'GET /api/v2/who ami HTTP/1.1\r\nHost: x\r\n\r\n'),
      400,
      /^Malformed HTTP request/,
    )
    assertEnvelope(
      await rawRequest(t.origin, 'GET /api/v2/whoami HTTP/1.1\r\nBad Header: x\r\n\r\n'),
      400,
      /^Malformed HTTP request/,
    )
    assertEnvelope(
      await rawRequest(t.origin, 'BREW /api/v2/whoami HTTP/1.1\r\nHost: x\r\n\r\n'),
      400,
      'Malformed HTTP request: unknown method',
    )
    await stillAnswers()
  })

  it('answers 404, 405-like methods, 413, 415 and JSON errors in the envelope', async () => {
    assertEnvelope(await rawRequest(t.origin, get('/nowhere')), 404, 'Endpoint not found')
    assertEnvelope(await rawRequest(t.origin, get('/api/v2/nowhere/at/all')), 404, 'Endpoint not found')
    assertEnvelope(
      await rawRequest(t.origin, 'PROPFIND /api/v2/whoami HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'),
      400,
      'Wrong request method',
    )
    const big = 'x'.repeat(4096)
    assertEnvelope(
      await rawRequest(
        t.origin,
        `PUT /api/v2/account/profile HTTP/1.1\r\nHost: x\r\nApi-Key: ${a.key}\r\nContent-Length: ${big.length + 2}\r\nConnection: close\r\n\r\n"${big}"`,
      ),
      413,
      'Request body too large',
    )
    const gz = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xde, 0xad, 0xbe, 0xef])
    assertEnvelope(
      await rawRequest(
        t.origin,
        Buffer.concat([
          Buffer.from(
            `PUT /api/v2/account/profile HTTP/1.1\r\nHost: x\r\nApi-Key: ${a.key}\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: ${gz.length}\r\nConnection: close\r\n\r\n`,
          ),
          gz,
        ]),
      ),
      415,
      /^Unsupported Content-Encoding/,
    )
    assertEnvelope(
      await rawRequest(
        t.origin,
        `PUT /api/v2/account/profile HTTP/1.1\r\nHost: x\r\nApi-Key: ${a.key}\r\nContent-Length: 5\r\nConnection: close\r\n\r\n{"a":`,
      ),
      400,
      'Invalid JSON body',
    )
    assertEnvelope(
      await rawRequest(
        t.origin,
        Buffer.from(
          `PUT /api/v2/account/profile HTTP/1.1\r\nHost: x\r\nApi-Key: ${a.key}\r\nContent-Type: application/json\r\nContent-Length: 4\r\nConnection: close\r\n\r\n\xff\xfe{}`,
          'latin1',
        ),
      ),
      400,
      'Invalid JSON body',
    )
    await stillAnswers()
  })

  it('refuses NUL in the URL and in JSON text, and keeps an escaped backslash before u0000', async () => {
    assertEnvelope(
      await rawRequest(t.origin, get('/api/v2/domains/a%00b.com', `Api-Key: ${a.key}\r\n`)),
      400,
      'Invalid URL: NUL (%00) is not allowed',
    )
    const put = (json: string) => t.request('PUT', '/account/profile', { key: a.key, rawBody: json })
    assert.deepEqual((await put('{"city":"a\\u0000b"}')).body, {
      status: 400,
      status_description: 'Invalid JSON body: text must not contain NUL (\\u0000)',
    })
    assert.deepEqual((await put('{"city":"a\\\\\\u0000b"}')).body, {
      status: 400,
      status_description: 'Invalid JSON body: text must not contain NUL (\\u0000)',
    })
    assert.deepEqual((await put('{"a\\u0000":1}')).body, {
      status: 400,
      status_description: 'Invalid JSON body: text must not contain NUL (\\u0000)',
    })
    // A literal backslash followed by u0000 is ordinary text.
    const literal = await put('{"no_such_field\\\\u0000":1}')
    assert.notEqual(literal.body.status_description, 'Invalid JSON body: text must not contain NUL (\\u0000)')
    await stillAnswers()
  })

  it('answers the same way on the plain-HTTP and the admin listener', async () => {
    const plain = t.server.httpUrl!
    assertEnvelope(
      await rawRequest(plain, get('/api/v2/whoami', `X-Big: ${'b'.repeat(20_000)}\r\n`), { plain: true }),
      431,
      /^Request headers too large/,
    )
    assertEnvelope(await rawRequest(plain, 'GARBAGE\r\n\r\n', { plain: true }), 400, /^Malformed HTTP request/)
    assertEnvelope(await rawRequest(plain, get('/api/v2/%'), { plain: true }), 400, /^Invalid URL/)
    const admin = new URL(t.server.adminUrl).origin
    assertEnvelope(
      await rawRequest(admin, get('/admin/v1/whoami', `X-Big: ${'b'.repeat(20_000)}\r\n`)),
      431,
      /^Request headers too large/,
    )
    assertEnvelope(await rawRequest(admin, 'GARBAGE\r\n\r\n'), 400, /^Malformed HTTP request/)
    assertEnvelope(await rawRequest(admin, get('/admin/v1/accounts/%E0%A4%A')), 400, /^Invalid URL/)
    assertEnvelope(await rawRequest(admin, get(`/admin/v1/accounts/${'1'.repeat(300)}`)), 414, /^URI too long/)
    await stillAnswers()
  })
})

describe('shutdown', () => {
  it('answers a request arriving while the server shuts down with 503 in the envelope', async () => {
    const s = await startTestApp('sqlite')
    try {
      const acc = await s.account()
      const httpServer = s.server.app.server
      const origin = new URL(s.origin)
      const socket = tls.connect({
        host: origin.hostname,
        port: Number(origin.port),
        rejectUnauthorized: false,
        servername: 'localhost',
      })
      const chunks: Buffer[] = []
      socket.on('data', (c: Buffer) => chunks.push(c))
      const ended = once(socket, 'close')
      await once(socket, 'secureConnect')
      // Request A: its body still coming, so the connection is busy when the shutdown starts.
      const started = once(httpServer, 'request')
      socket.write(
        `PUT /api/v2/account/profile HTTP/1.1\r\nHost: x\r\nApi-Key: ${acc.key}\r\nContent-Length: 2\r\n\r\n{`,
      )
      await started
      // The listener stops once the preClose hooks have run: from then on the app is shutting down.
      const stopping = new Promise<void>((resolve) => {
        const close = httpServer.close.bind(httpServer)
        httpServer.close = ((cb?: (err?: Error) => void) => {
          resolve()
          return close(cb)
        }) as typeof httpServer.close
      })
      const closed = s.server.app.close()
      await stopping
      // The rest of A, and request B on the same connection.
      socket.write(`}GET /api/v2/whoami HTTP/1.1\r\nHost: x\r\nApi-Key: ${acc.key}\r\n\r\n`)
      await ended
      await closed
      const raw = Buffer.concat(chunks).toString('latin1')
      const at = raw.indexOf('HTTP/1.1 503')
      assert.ok(at >= 0, raw)
      const b = parseRaw(Buffer.from(raw.slice(at), 'latin1'))
      assert.equal(b.headers.connection, 'close')
      assertEnvelope(b, 503, 'Service unavailable: the server is shutting down')
    } finally {
      await s.close()
    }
  })
})

forEachDialect((dialect) => {
  describe(`paging numbers out of any range (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    before(async () => {
      t = await startTestApp(dialect)
      a = await t.account()
    })
    after(() => t.close())

    const lists = [
      '/domains/extensions',
      '/certificates',
      '/account/tickets',
      '/account/invoices',
      '/account/users',
      '/affiliate/commissions',
      '/domains',
    ]
    it('answers `Page out of range` for pages no list can reach', async () => {
      for (const list of lists) {
        for (const page of ['1e20', '9007199254740993', '99999999999', '1e308']) {
          const r = await t.request('GET', `${list}?page=${page}`, { key: a.key })
          assert.deepEqual(r.body, { status: 400, status_description: 'Page out of range' }, `${list} page=${page}`)
        }
      }
    })

    it('answers a 400 with a clear text for pages and limits that are not positive integers', async () => {
      for (const list of lists) {
        for (const q of [
          'page=-1',
          'page=0',
          'page=1.5',
          'page=NaN',
          'page=Infinity',
          'page=-Infinity',
          'page=',
          'page=1&page=2',
          'limit=1e20',
          'limit=0.5',
          'limit=-0',
          'limit=NaN',
        ]) {
          const r = await t.request('GET', `${list}?${q}`, { key: a.key })
          assert.equal(r.status, 400, `${list}?${q}: ${r.text}`)
          assert.match(r.body.status_description, /^Invalid (page|limit)/, `${list}?${q}`)
        }
      }
    })

    it('answers a lone UTF-16 surrogate or a NUL in a CSR subject field with a 400 naming the field', async () => {
      const body = {
        common_name: 'www.example.com',
        organization: 'Example',
        email: 'a@example.com',
        country: 'NL',
        state: 'NH',
        locality: 'Amsterdam',
        key_type: 'ec',
      }
      // JSON.stringify would escape the surrogate anyway; written by hand to be sure it goes out as \ud800.
      const lone = JSON.stringify(body).replace('"Example"', '"Ex\\ud800ample"')
      const r = await t.request('POST', '/certificates/csr', {
        key: a.key,
        rawBody: lone,
        headers: { 'content-type': 'application/json' },
      })
      assert.deepEqual(r.body, {
        status: 400,
        status_description: 'Invalid organization: it is not valid Unicode text (a lone UTF-16 surrogate)',
      })
      const nul = await t.request('POST', '/certificates/csr', {
        key: a.key,
        body: { ...body, locality: 'Ams\u0000terdam' },
      })
      assert.deepEqual(nul.body, {
        status: 400,
        status_description: 'Invalid JSON body: text must not contain NUL (\\u0000)',
      })
      const bidi = await t.request('POST', '/certificates/csr', {
        key: a.key,
        body: { ...body, locality: 'Ams\u202eterdam' },
      })
      assert.equal(bidi.status, 400)
      assert.match(bidi.body.status_description, /^Invalid locality: /)
      const unicode = await t.request('POST', '/certificates/csr', {
        key: a.key,
        body: { ...body, organization: '#Zürich "AG", \\ 😀' },
      })
      assert.equal(unicode.status, 200, unicode.text)
    })

    it('searches with any text: wildcards are literal, NUL and broken UTF-8 answer a list or a 400, never an error', async () => {
      const odd = [
        '%25',
        '_',
        '%5C',
        '%00',
        'a%00b',
        '%ED%A0%80',
        '%FF',
        '%C3',
        `${'x'.repeat(255)}`,
        '%27%22',
        '%C4%B0',
        '*',
        '%5B%5D',
        '%E2%80%AE',
      ]
      for (const list of [...lists, '/domains?limit=5', '/domains/extensions?limit=5']) {
        for (const q of odd) {
          const r = await t.request('GET', `${list}${list.includes('?') ? '&' : '?'}search=${q}`, { key: a.key })
          assert.ok(r.status === 200 || r.status === 400, `${list} search=${q}: ${r.status} ${r.text}`)
          assert.equal(r.body.status, r.status)
          if (r.status === 400)
            assert.equal(r.body.status_description, 'Invalid URL: NUL (%00) is not allowed', `${list} search=${q}`)
        }
      }
      // `%` and `_` match themselves only.
      const pct = await t.request('GET', '/domains/extensions?search=%25', { key: a.key })
      assert.equal(pct.body.data.pagination.total, 0)
      const under = await t.request('GET', '/domains/extensions?search=_', { key: a.key })
      assert.equal(under.body.data.pagination.total, 0)
    })

    it('pages the extension list normally', async () => {
      const r = await t.request('GET', '/domains/extensions?page=1&limit=1', { key: a.key })
      assert.equal(r.status, 200)
      assert.equal(r.body.data.pagination.limit, 1)
    })
  })
})
