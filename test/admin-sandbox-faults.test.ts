import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { forEachDialect, startTestApp, tempDir, type TestApp } from './helpers/app.js'
import { NO_KEY } from './helpers/admin.js'
import { keyPrefix } from '../src/modules/iam/keys.js'

// The sandbox's fault injection and journal of customer calls.
forEachDialect((dialect) => {
  describe(`sandbox mode (${dialect})`, () => {
    let t: TestApp
    let token: string
    let dir: string
    const SEED_KEY = 'sandbox-acme-main-key-000000000001'
    const SUB_KEY = 'sandbox-acme-dns-key-0000000000002'
    const adm = (method: string, p: string, body?: unknown) =>
      t.request(method, `/admin/v1${p}`, { body, headers: { authorization: `Bearer ${token}` } })

    before(async () => {
      dir = tempDir()
      const seed = path.join(dir, 'seed.yaml')
      fs.writeFileSync(
        seed,
        [
          'accounts:',
          '  - name: Acme B.V.',
          '    email: owner@acme-sandbox.nl',
          '    keys:',
          `      - key: ${SEED_KEY}`,
          '        label: ci',
          '    users:',
          '      - email: dns@acme-sandbox.nl',
          '        permissions: [domains]',
          '        keys:',
          `          - key: ${SUB_KEY}`,
          '    domains:',
          '      - name: acme-sandbox.nl',
          '        renewal_date: "2030-01-15"',
          '        tags: [prod]',
          '        records:',
          '          - { type: A, name: "@", value: 192.0.2.10 }',
          '          - { type: TXT, name: _acme-challenge, value: token, ttl: 60 }',
          '  - name: Suspended Ltd',
          '    email: gone@suspended.test',
          '    status: suspended',
          '    keys:',
          '      - key: sandbox-suspended-key-000000000003',
          '',
        ].join('\n'),
      )
      t = await startTestApp(dialect, {
        env: { HOSTAPI_SANDBOX: '1', HOSTAPI_SEED_FILE: seed, HOSTAPI_JOURNAL_SIZE: '5' },
      })
      token = (await t.ctx.services.admin.createToken()).token
    })
    after(async () => {
      await t.close()
      fs.rmSync(dir, { recursive: true, force: true })
    })

    it('injects faults by operation id: probability 1 and count 2 gives two injected answers, then the real one', async () => {
      const fault = await adm('POST', '/sandbox/faults', { operation: 'whoami', status: 503, probability: 1, count: 2 })
      assert.equal(fault.status, 200, fault.text)
      assert.equal(fault.body.data.remaining, 2)
      const answers = []
      for (let i = 0; i < 3; i++) answers.push((await t.request('GET', '/whoami', { key: SEED_KEY })).body)
      assert.deepEqual(answers[0], { status: 503, status_description: 'Service unavailable' })
      assert.deepEqual(answers[1], { status: 503, status_description: 'Service unavailable' })
      assert.equal(answers[2].status, 200)
      assert.equal(answers[2].data.customer_number, 100001)
      assert.deepEqual((await adm('GET', '/sandbox/faults')).body.data.faults, [])

      // A fault never answers a call that fails authentication, and a text of one's own can be set.
      await adm('POST', '/sandbox/faults', {
        operation: 'whoami',
        status: 500,
        status_description: 'Registry down',
        count: 1,
      })
      assert.deepEqual((await t.request('GET', '/whoami')).body, NO_KEY)
      assert.deepEqual((await t.request('GET', '/whoami', { key: SEED_KEY })).body, {
        status: 500,
        status_description: 'Registry down',
      })

      // A fault without a status only delays the real answer.
      await adm('POST', '/sandbox/faults', { operation: 'whoami', latency_ms: 5, count: 1 })
      assert.equal((await t.request('GET', '/whoami', { key: SEED_KEY })).body.data.customer_number, 100001)
      assert.deepEqual((await adm('GET', '/sandbox/faults')).body.data.faults, [])

      const never = await adm('POST', '/sandbox/faults', { operation: 'whoami', status: 500, probability: 0 })
      for (let i = 0; i < 5; i++) assert.equal((await t.request('GET', '/whoami', { key: SEED_KEY })).status, 200)
      assert.equal((await adm('DELETE', `/sandbox/faults/${never.body.data.id}`)).status, 200)
      assert.deepEqual((await adm('DELETE', `/sandbox/faults/${never.body.data.id}`)).body, {
        status: 404,
        status_description: 'Fault not found',
      })

      assert.deepEqual((await adm('POST', '/sandbox/faults', { operation: 'noSuchOperation', status: 500 })).body, {
        status: 400,
        status_description: 'Unknown operation: noSuchOperation (use an operationId of the customer API)',
      })
      assert.equal((await adm('POST', '/sandbox/faults', { operation: 'whoami', status: 418 })).status, 400)
    })

    it('injects faults by path parameter, account and key; a 429 with Retry-After; a connection reset', async () => {
      // Only the named domain fails; the account's other calls run.
      await adm('POST', '/sandbox/faults', {
        operation: 'getDomain',
        params: { domain: 'acme-sandbox.nl' },
        status: 404,
      })
      assert.equal((await t.request('GET', '/domains/acme-sandbox.nl', { key: SEED_KEY })).status, 404)
      assert.equal(
        (await t.request('GET', '/domains/other-name.nl', { key: SEED_KEY })).body.status_description,
        'You have no access to this resource',
      )
      assert.equal((await adm('DELETE', '/sandbox/faults')).status, 200)

      // By key: only calls with the named key fail; by account: another account's calls run.
      await adm('POST', '/sandbox/faults', { operation: 'whoami', key_prefix: 'zzzzzzzz', status: 503 })
      assert.equal((await t.request('GET', '/whoami', { key: SEED_KEY })).status, 200)
      await adm('DELETE', '/sandbox/faults')
      await adm('POST', '/sandbox/faults', { operation: 'whoami', key_prefix: keyPrefix(SEED_KEY), status: 503 })
      assert.equal((await t.request('GET', '/whoami', { key: SEED_KEY })).status, 503)
      await adm('DELETE', '/sandbox/faults')
      await adm('POST', '/sandbox/faults', { operation: 'whoami', customer_number: 999999, status: 503 })
      assert.equal((await t.request('GET', '/whoami', { key: SEED_KEY })).status, 200)
      await adm('DELETE', '/sandbox/faults')

      // An injected 429 says when to retry, as the real rate limit does.
      const limited = await adm('POST', '/sandbox/faults', { operation: 'whoami', status: 429, count: 2 })
      assert.equal(limited.body.data.retry_after, 1)
      const r429 = await t.request('GET', '/whoami', { key: SEED_KEY })
      assert.equal(r429.status, 429)
      assert.equal(r429.headers['retry-after'], '1')
      await adm('DELETE', '/sandbox/faults')
      await adm('POST', '/sandbox/faults', { operation: 'whoami', status: 429, retry_after: 7, count: 1 })
      assert.equal((await t.request('GET', '/whoami', { key: SEED_KEY })).headers['retry-after'], '7')

      // A reset closes the connection without an answer.
      await adm('POST', '/sandbox/faults', { operation: 'whoami', reset: true, count: 1 })
      await assert.rejects(t.request('GET', '/whoami', { key: SEED_KEY }), (e: NodeJS.ErrnoException) => {
        assert.match(String(e.code ?? e.message), /ECONNRESET|socket hang up/)
        return true
      })
      assert.equal((await t.request('GET', '/whoami', { key: SEED_KEY })).status, 200)
    })

    it('keeps a journal of the last customer calls, readable and clearable', async () => {
      assert.equal((await adm('DELETE', '/sandbox/journal')).status, 200)
      await t.request('POST', '/vps/ssh-keys', {
        key: SEED_KEY,
        body: { name: 'journal', public_key: 'ssh-ed25519 nope' },
      })
      await t.request('GET', '/whoami', { key: SEED_KEY })
      const j = await adm('GET', '/sandbox/journal')
      assert.equal(j.status, 200, j.text)
      const entries = j.body.data.entries
      assert.equal(entries.length, 2, 'admin calls are not journalled')
      assert.equal(entries[0].method, 'POST')
      assert.equal(entries[0].path, '/api/v2/vps/ssh-keys')
      assert.equal(entries[0].operation, 'addSshKey')
      assert.equal(entries[0].status, 400)
      assert.deepEqual(entries[0].body, { name: 'journal', public_key: 'ssh-ed25519 nope' })
      assert.equal(entries[0].key_prefix, SEED_KEY.slice(0, 8))
      assert.equal(entries[1].path, '/api/v2/whoami')
      assert.equal(entries[1].status, 200)
      assert.equal((await adm('GET', '/sandbox/journal?limit=1')).body.data.entries[0].path, '/api/v2/whoami')

      for (let i = 0; i < 7; i++) await t.request('GET', '/whoami', { key: SEED_KEY })
      assert.equal(
        (await adm('GET', '/sandbox/journal')).body.data.entries.length,
        5,
        'only the last HOSTAPI_JOURNAL_SIZE calls',
      )
      await adm('DELETE', '/sandbox/journal')
      assert.deepEqual((await adm('GET', '/sandbox/journal')).body.data.entries, [])
    })

    it('journals the answer: status, headers, body with secrets redacted and cut to 4096 characters, and duration', async () => {
      await adm('DELETE', '/sandbox/journal')
      const who = await t.request('GET', '/whoami', {
        key: SEED_KEY,
        headers: { authorization: 'Bearer not-for-the-journal', 'x-trace': 'abc' },
      })
      const code = await t.request('GET', '/domains/acme-sandbox.nl/auth-code', { key: SEED_KEY })
      assert.equal(code.status, 200, code.text)
      const records = Array.from({ length: 80 }, (_, i) => ({
        type: 'TXT',
        name: `r${i}`,
        value: `v${'x'.repeat(40)}${i}`,
      }))
      assert.equal(
        (await t.request('PUT', '/domains/acme-sandbox.nl/dns', { key: SEED_KEY, body: { records } })).status,
        200,
      )
      const big = await t.request('GET', '/domains/acme-sandbox.nl/dns', { key: SEED_KEY })
      assert.ok(big.text.length > 4096)

      const j = await adm('GET', '/sandbox/journal')
      assert.equal(j.status, 200, j.text)
      for (const secret of [SEED_KEY, 'not-for-the-journal', code.body.data.auth_code])
        assert.ok(!j.text.includes(secret), `the journal does not show ${secret.slice(0, 6)}…`)
      const [w, c, , dns] = j.body.data.entries
      assert.equal(w.status, 200)
      assert.deepEqual(w.response_body, who.body)
      assert.equal(w.response_truncated, false)
      assert.equal(w.response_headers['content-type'], who.headers['content-type'])
      assert.equal(w.request_headers['api-key'], '[redacted]')
      assert.equal(w.request_headers.authorization, '[redacted]')
      assert.equal(w.request_headers['x-trace'], 'abc')
      assert.equal(typeof w.duration_ms, 'number')
      assert.ok(w.duration_ms > 0 && w.duration_ms < 60_000, String(w.duration_ms))
      assert.equal(c.response_body.data.auth_code, '[redacted]')
      assert.equal(dns.response_truncated, true)
      assert.equal(dns.response_body, big.text.slice(0, 4096))
      await adm('DELETE', '/sandbox/journal')
    })

    // Deeper than HOSTAPI_JSON_MAX_DEPTH (64) the body is refused before it is parsed, so never journalled parsed.
    it('journals a body nested 60 deep cut at depth 20, secrets below it included, and stays readable', async () => {
      await adm('DELETE', '/sandbox/journal')
      const rawBody = `{"name":${'['.repeat(60)}${']'.repeat(60)},"deep":${'{"a":'.repeat(25)}{"password":"hunter2"}${'}'.repeat(25)}}`
      const sent = await t.request('POST', '/vps/ssh-keys', {
        key: SEED_KEY,
        rawBody,
        headers: { 'content-type': 'application/json' },
      })
      assert.equal(sent.status, 400)
      const j = await adm('GET', '/sandbox/journal')
      assert.equal(j.status, 200, j.text)
      assert.doesNotMatch(j.text, /hunter2/)
      let name = j.body.data.entries[0].body.name
      for (let depth = 1; depth <= 20; depth++) name = name[0]
      assert.equal(name, '[nested too deep]')
      await adm('DELETE', '/sandbox/journal')
    })
  })
})
