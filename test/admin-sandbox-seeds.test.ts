import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { forEachDialect, startTestApp, tempDir } from './helpers/app.js'
import { NO_KEY } from './helpers/admin.js'

// Seed files and a fixed admin token.
forEachDialect((dialect) => {
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
