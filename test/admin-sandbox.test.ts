import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { forEachDialect, startTestApp, tempDir, type TestApp } from './helpers/app.js'
import { NO_KEY, sshKey } from './helpers/admin.js'
import { Type } from 'typebox'
import { defineJob } from '../src/jobs/runner.js'

// The sandbox's seed, reset and clock; fault injection and the journal: admin-sandbox-faults; seed files: admin-sandbox-seeds.
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
  })
})
