import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { forEachDialect, startTestApp, tempDir, type TestApp } from './helpers/app.js'
import { NO_KEY, sshKey } from './helpers/admin.js'
import { Type } from 'typebox'
import { defineJob } from '../src/jobs/runner.js'
import { keyPrefix } from '../src/modules/iam/keys.js'

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

    const seededDomain = async () => {
      const d = await t.request('GET', '/domains/acme-sandbox.nl', { key: SEED_KEY })
      if (d.status !== 200) return d.body
      const dns = await t.request('GET', '/domains/acme-sandbox.nl/dns', { key: SEED_KEY })
      return {
        renewal_date: d.body.data.renewal_date,
        tags: d.body.data.tags,
        is_locked: Boolean(d.body.data.is_locked),
        records: dns.body.data.records,
      }
    }

    it('loads the seed file on an empty database: fixed keys, sub-users, suspended accounts, domains with records', async () => {
      const who = await t.request('GET', '/whoami', { key: SEED_KEY })
      assert.equal(who.status, 200)
      assert.equal(who.body.data.customer_number, 100001)
      assert.equal((await t.request('GET', '/whoami', { key: SUB_KEY })).status, 200)
      assert.deepEqual((await t.request('GET', '/vps/ssh-keys', { key: SUB_KEY })).body, {
        status: 400,
        status_description: 'No access to this VPS',
      })
      assert.deepEqual((await t.request('GET', '/whoami', { key: 'sandbox-suspended-key-000000000003' })).body, NO_KEY)
      assert.deepEqual(await seededDomain(), {
        renewal_date: '2030-01-15',
        tags: ['prod'],
        is_locked: false,
        records: [
          { type: 'A', name: 'acme-sandbox.nl.', value: '192.0.2.10', ttl: 3600 },
          { type: 'TXT', name: '_acme-challenge.acme-sandbox.nl.', value: 'token', ttl: 60 },
        ],
      })
      // The seeded name is registered, so nobody else can order it.
      const avail = await t.request('GET', '/domains/availability/acme-sandbox.nl', { key: SEED_KEY })
      assert.equal(avail.body.data.status, 'unavailable')
    })

    it('resets to the seed after changes through the customer API', async () => {
      assert.equal(
        (await t.request('POST', '/vps/ssh-keys', { key: SEED_KEY, body: { name: 'laptop', public_key: sshKey() } }))
          .status,
        200,
      )
      assert.equal((await t.request('GET', '/vps/ssh-keys', { key: SEED_KEY })).body.data.ssh_keys.length, 1)
      const extra = await adm('POST', '/accounts', { name: 'Late Ltd', email: 'late@late.test', key: {} })
      const lateKey = extra.body.data.api_key
      assert.equal((await t.request('GET', '/whoami', { key: lateKey })).status, 200)
      assert.equal(
        (await t.request('PUT', '/domains/acme-sandbox.nl/dns', { key: SEED_KEY, body: { records: [] } })).status,
        200,
      )

      const reset = await adm('POST', '/sandbox/reset')
      assert.equal(reset.status, 200, reset.text)
      assert.deepEqual(reset.body, {
        status: 200,
        status_description: 'Sandbox reset',
        data: { accounts: 2, seed: 'file', demo_key: null },
      })

      assert.deepEqual((await t.request('GET', '/whoami', { key: lateKey })).body, NO_KEY)
      const who = await t.request('GET', '/whoami', { key: SEED_KEY })
      assert.equal(who.body.data.customer_number, 100001, 'customer numbers start again')
      assert.deepEqual((await t.request('GET', '/vps/ssh-keys', { key: SEED_KEY })).body.data.ssh_keys, [])
      assert.equal((await seededDomain()).records.length, 2)
      const accounts = await adm('GET', '/accounts')
      assert.deepEqual(
        accounts.body.data.accounts.map((x: { name: string }) => x.name),
        ['Acme B.V.', 'Suspended Ltd'],
      )
    })

    it('resets to a seed document given in the body, refuses an invalid one before deleting anything', async () => {
      const DOC_KEY = 'sandbox-document-key-00000000000004'
      const doc = {
        accounts: [
          {
            name: 'Document Ltd',
            email: 'owner@document-seed.test',
            keys: [{ key: DOC_KEY, label: 'ci' }],
            domains: [
              { name: 'document-seed.nl', tags: ['doc'], records: [{ type: 'A', name: '@', value: '192.0.2.44' }] },
            ],
          },
        ],
      }
      const reset = await adm('POST', '/sandbox/reset', doc)
      assert.equal(reset.status, 200, reset.text)
      assert.deepEqual(reset.body.data, { accounts: 1, seed: 'document', demo_key: null })
      assert.deepEqual(
        (await t.request('GET', '/whoami', { key: SEED_KEY })).body,
        NO_KEY,
        'the seed file is not loaded',
      )
      assert.equal((await t.request('GET', '/whoami', { key: DOC_KEY })).body.data.customer_number, 100001)
      const dns = await t.request('GET', '/domains/document-seed.nl/dns', { key: DOC_KEY })
      assert.deepEqual(dns.body.data.records, [
        { type: 'A', name: 'document-seed.nl.', value: '192.0.2.44', ttl: 3600 },
      ])

      // Refused before anything is deleted: a key or an account's e-mail address listed twice, a name that is no
      // domain, a key too short.
      const twice = structuredClone(doc)
      twice.accounts.push({ ...doc.accounts[0], email: 'other@document-seed.test', domains: [] })
      assert.deepEqual((await adm('POST', '/sandbox/reset', twice)).body, {
        status: 400,
        status_description: `Invalid seed: /accounts/1: the key ${DOC_KEY.slice(0, 8)}… is listed twice`,
      })
      const sameEmail = { accounts: [{ ...doc.accounts[0], users: [{ email: 'OWNER@document-seed.test' }] }] }
      assert.deepEqual((await adm('POST', '/sandbox/reset', sameEmail)).body, {
        status: 400,
        status_description: 'Invalid seed: /accounts/0: the e-mail address owner@document-seed.test is listed twice',
      })
      const badName = { accounts: [{ ...doc.accounts[0], domains: [{ name: 'not a domain' }] }] }
      const refused = await adm('POST', '/sandbox/reset', badName)
      assert.equal(refused.status, 400)
      assert.match(refused.body.status_description, /^Invalid seed: \/accounts\/0\/domains\/0: invalid domain name/)
      const shortKey = await adm('POST', '/sandbox/reset', {
        accounts: [{ ...doc.accounts[0], keys: [{ key: 'short' }] }],
      })
      assert.equal(shortKey.status, 400, shortKey.text)
      assert.equal((await t.request('GET', '/whoami', { key: DOC_KEY })).status, 200, 'nothing was deleted')

      // Without a body the configured seed comes back.
      assert.deepEqual((await adm('POST', '/sandbox/reset')).body.data, { accounts: 2, seed: 'file', demo_key: null })
      assert.deepEqual((await t.request('GET', '/whoami', { key: DOC_KEY })).body, NO_KEY)
      assert.equal((await t.request('GET', '/whoami', { key: SEED_KEY })).status, 200)
    })

    it('moves the clock, runs the jobs that became due, and puts it back on reset', async () => {
      const before = await adm('GET', '/sandbox/clock')
      assert.equal(before.body.data.offset_seconds, 0)
      let ran = 0
      const later = defineJob({
        name: 'test.later',
        payload: Type.Null(),
        handle: async () => {
          ran++
        },
      })
      t.ctx.jobs.register(later)
      await t.ctx.jobs.enqueue(later, null, {
        trx: t.ctx.db,
        runAt: new Date(t.ctx.clock.now().getTime() + 20 * 86_400_000),
      })
      const moved = await adm('POST', '/sandbox/clock', { advance: '30d' })
      assert.equal(moved.status, 200, moved.text)
      assert.equal(moved.body.data.offset_seconds, 30 * 86400)
      assert.equal(moved.body.data.jobs_run, 1)
      assert.equal(ran, 1)
      assert.ok(Math.abs(Date.parse(moved.body.data.now) - (Date.now() + 30 * 86_400_000)) < 60_000)
      assert.ok(
        Math.abs(t.ctx.clock.now().getTime() - Date.parse(moved.body.data.now)) < 60_000,
        'the context clock moved',
      )

      // Keys that expire inside the skipped time are expired now.
      const soon = await adm('POST', '/accounts/100001/keys', {
        expires_at: new Date(Date.now() + 86_400_000).toISOString(),
      })
      assert.deepEqual((await t.request('GET', '/whoami', { key: soon.body.data.key })).body, {
        status: 401,
        status_description: 'API key has expired',
      })

      const to = await adm('POST', '/sandbox/clock', { to: '2031-06-01' })
      // The sandbox clock runs on from the time it was set to (not from the time it had).
      assert.ok(Date.parse(to.body.data.now) >= Date.parse('2031-06-01T00:00:00Z'), to.body.data.now)
      assert.equal(to.body.data.now.slice(0, 13), '2031-06-01T00', 'the hour it was set to')
      assert.deepEqual((await adm('POST', '/sandbox/clock', { advance: 'a month' })).body, {
        status: 400,
        status_description: 'Invalid advance: use a number and a unit, such as 30d, 12h, 15m or 45s',
      })
      assert.deepEqual((await adm('POST', '/sandbox/clock', {})).body, {
        status: 400,
        status_description: 'Set either advance or to',
      })

      await adm('POST', '/sandbox/reset')
      assert.equal((await adm('GET', '/sandbox/clock')).body.data.offset_seconds, 0)
    })

    it('renews a seeded domain when the clock passes its renewal date', async () => {
      const early = await adm('POST', '/sandbox/clock', { to: '2030-01-14T12:00:00Z' })
      assert.equal(early.body.data.jobs_run, 0)
      assert.equal((await seededDomain()).renewal_date, '2030-01-15')
      const moved = await adm('POST', '/sandbox/clock', { advance: '1d' })
      assert.ok(moved.body.data.jobs_run >= 1, moved.text)
      assert.equal((await seededDomain()).renewal_date, '2031-01-15', 'renewed for a year')
      await adm('POST', '/sandbox/reset')
    })

    it('ends a cancelled domain when the clock passes its renewal date', async () => {
      const cancel = await t.request('DELETE', '/domains/acme-sandbox.nl', { key: SEED_KEY })
      assert.equal(cancel.status, 200, cancel.text)
      assert.equal(
        (await t.request('GET', '/domains/acme-sandbox.nl', { key: SEED_KEY })).status,
        200,
        'still there until the renewal date',
      )
      const early = await adm('POST', '/sandbox/clock', { to: '2030-01-14T12:00:00Z' })
      assert.equal(early.body.data.jobs_run, 0)
      assert.equal((await t.request('GET', '/domains/acme-sandbox.nl', { key: SEED_KEY })).status, 200)
      const moved = await adm('POST', '/sandbox/clock', { advance: '1d' })
      // The end job ends it; its renewal job, due the same day, finds it cancelled and orders nothing.
      assert.equal(moved.body.data.jobs_run, 2)
      const gone = await t.request('GET', '/domains/acme-sandbox.nl', { key: SEED_KEY })
      assert.deepEqual(gone.body, { status: 400, status_description: 'You have no access to this resource' })
      assert.equal(
        (await t.request('GET', '/domains/availability/acme-sandbox.nl', { key: SEED_KEY })).body.data.status,
        'available',
      )

      await adm('POST', '/sandbox/reset')
      assert.equal((await seededDomain()).renewal_date, '2030-01-15', 'the reset brings the domain back')
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

  describe(`seed files and a fixed admin token (${dialect})`, () => {
    it('loads the example seed file and accepts HOSTAPI_ADMIN_TOKEN', async () => {
      const seed = new URL('../examples/sandbox-seed.yaml', import.meta.url).pathname
      const token = 'adm_fixed-token-for-ci-000000000001'
      const t = await startTestApp(dialect, { env: { HOSTAPI_SEED_FILE: seed, HOSTAPI_ADMIN_TOKEN: token } })
      try {
        const owner = 'sandbox-owner-key-00000000000000001'
        assert.equal((await t.request('GET', '/whoami', { key: owner })).status, 200)
        const dns = await t.request('GET', '/domains/example-sandbox.nl/dns', {
          key: 'sandbox-dns-bot-key-000000000000002',
        })
        assert.equal(dns.status, 200, dns.text)
        assert.equal(dns.body.data.records.length, 6)
        const list = await t.request('GET', '/domains', { key: owner })
        assert.deepEqual(
          list.body.data.domains.map((d: { domain: string }) => d.domain),
          ['example-sandbox.nl', 'example-staging.com'],
        )
        assert.deepEqual(
          (await t.request('GET', '/whoami', { key: 'sandbox-suspended-key-0000000000003' })).body,
          NO_KEY,
        )
        const accounts = await t.request('GET', '/admin/v1/accounts', { headers: { authorization: `Bearer ${token}` } })
        assert.equal(accounts.body.data.pagination.total, 2)
      } finally {
        await t.close()
      }
    })

    it('gives a seed-file account the demo data of every area when asked', async () => {
      const dir = tempDir()
      const file = path.join(dir, 'seed.json')
      fs.writeFileSync(
        file,
        JSON.stringify({
          accounts: [
            {
              name: 'Demo-like',
              email: 'demo-like@example.test',
              demo_data: true,
              keys: [{ key: 'sandbox-demo-like-key-00000000001' }],
              domains: [{ name: 'own-sandbox.nl' }],
            },
          ],
        }),
      )
      const t = await startTestApp(dialect, { env: { HOSTAPI_SEED_FILE: file } })
      try {
        const key = 'sandbox-demo-like-key-00000000001'
        const domains = (await t.request('GET', '/domains', { key })).body.data.domains.map(
          (d: { domain: string }) => d.domain,
        )
        assert.ok(domains.includes('own-sandbox.nl') && domains.length > 1, domains.join(','))
        assert.ok((await t.request('GET', '/vps', { key })).body.data.vps.length > 0)
      } finally {
        await t.close()
        fs.rmSync(dir, { recursive: true, force: true })
      }
    })

    it('refuses to start with a seed file that breaks the rules, naming every problem', async () => {
      const dir = tempDir()
      try {
        const bad = path.join(dir, 'bad.json')
        fs.writeFileSync(
          bad,
          JSON.stringify({
            accounts: [
              {
                name: 'X',
                email: 'x@x.test',
                keys: [{ key: 'short' }],
                domains: [{ name: 'not a domain' }],
                colour: 'red',
              },
            ],
          }),
        )
        await assert.rejects(startTestApp(dialect, { env: { HOSTAPI_SEED_FILE: bad } }), (e: Error) => {
          assert.match(e.message, /^Invalid seed file .*bad\.json:/)
          assert.match(e.message, /keys\/0\/key/)
          return true
        })
        const record = path.join(dir, 'record.yaml')
        fs.writeFileSync(
          record,
          'accounts:\n  - name: Y\n    email: y@y.test\n    domains:\n      - name: y-sandbox.nl\n        records:\n          - { type: A, name: www, value: not-an-ip }\n',
        )
        await assert.rejects(startTestApp(dialect, { env: { HOSTAPI_SEED_FILE: record } }), (e: Error) => {
          assert.match(e.message, /accounts\/0\/domains\/0 \(y-sandbox\.nl\): Invalid DNS record A www/)
          return true
        })
        await assert.rejects(
          startTestApp(dialect, { env: { HOSTAPI_SEED_FILE: path.join(dir, 'missing.yaml') } }),
          /cannot read it/,
        )
      } finally {
        fs.rmSync(dir, { recursive: true, force: true })
      }
    })
  })
})
