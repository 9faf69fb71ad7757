import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { describeWithEnv, forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { twoInstances } from './helpers/instances.js'
import { freePort, insertZone, queryTcp, queryUdp, txtOf } from './helpers/dns.js'
import { eventually } from './helpers/wait.js'

// The whole ACME DNS-01 path: a client writes the challenge through the API, the validator asks the DNS server.
forEachDialect((dialect) => {
  describe(`ACME DNS-01 through the API and the DNS server (${dialect})`, () => {
    let t: TestApp
    let port: number
    let owner: TestAccount
    const domain = 'acme-flow.nl'
    const challenge = `_acme-challenge.${domain}`

    before(async () => {
      port = await freePort()
      t = await startTestApp(dialect, { env: { HOSTAPI_DNS_PORT: String(port) } })
      owner = await t.account()
      await insertZone(t.ctx.db, owner.accountId, domain, {
        records: [{ type: 'A', name: domain, value: '192.0.2.1' }],
      })
    })
    after(async () => {
      await t?.close()
    })

    test('PATCH a TXT challenge → the DNS server answers it; DELETE → gone', async () => {
      const before = await queryUdp(port, challenge, 'TXT')
      assert.equal(before.answers!.length, 0)

      const patched = await t.request('PATCH', `/api/v2/domains/${domain}/dns`, {
        key: owner.key,
        body: { record: { type: 'TXT', name: '_acme-challenge', value: 'x', ttl: 120 } },
      })
      assert.equal(patched.status, 200, patched.text)
      await eventually(async () => txtOf(await queryUdp(port, challenge, 'TXT')).includes('x'), {
        what: 'the challenge is served',
      })
      const answer = await queryUdp(port, challenge, 'TXT')
      assert.equal((answer.answers![0] as unknown as { ttl: number }).ttl, 120)

      // Wildcard and apex certificates need two values at the same name: PUT keeps both.
      const put = await t.request('PUT', `/api/v2/domains/${domain}/dns`, {
        key: owner.key,
        body: {
          records: [
            { type: 'A', name: '@', value: '192.0.2.1', ttl: 3600 },
            { type: 'TXT', name: '_acme-challenge', value: 'token-one', ttl: 60 },
            { type: 'TXT', name: `${challenge}.`, value: 'token-two', ttl: 60 },
          ],
        },
      })
      assert.equal(put.status, 200, put.text)
      await eventually(
        async () =>
          txtOf(await queryTcp(port, challenge, 'TXT'))
            .sort()
            .join(',') === 'token-one,token-two',
        { what: 'both values are served' },
      )

      const del = await t.request('DELETE', `/api/v2/domains/${domain}/dns`, {
        key: owner.key,
        body: { record: { type: 'TXT', name: '_acme-challenge', value: 'token-one' } },
      })
      assert.equal(del.status, 200, del.text)
      await eventually(async () => txtOf(await queryUdp(port, challenge, 'TXT')).join(',') === 'token-two', {
        what: 'only the other value is served',
      })
    })

    test('the zone file from the API carries the serial the DNS server answers, and an import is served', async () => {
      const got = await t.request('GET', `/api/v2/domains/${domain}/dns/zone`, { key: owner.key })
      assert.equal(got.status, 200, got.text)
      const zone: string = got.body.data.zone
      const soa = await queryUdp(port, domain, 'SOA')
      const serial = (soa.answers![0] as unknown as { data: { serial: number } }).data.serial
      assert.match(zone, new RegExp(`\\b${serial} ; serial`))

      const imported = await t.request('PUT', `/api/v2/domains/${domain}/dns/zone`, {
        key: owner.key,
        body: { zone: `$ORIGIN ${domain}.\n$TTL 300\n@ IN A 192.0.2.9\nwww IN CNAME @ ; comment\n` },
      })
      assert.equal(imported.status, 200, imported.text)
      await eventually(
        async () => {
          const r = await queryUdp(port, `www.${domain}`, 'A')
          return (
            r.answers!.map((a) => `${a.type} ${(a as unknown as { data: string }).data}`).join(',') ===
            `CNAME ${domain},A 192.0.2.9`
          )
        },
        { what: 'the imported zone is served' },
      )
    })
  })
})

// Two instances on one PostgreSQL database: a change made through one is served by the other's DNS server.
describeWithEnv(['HOSTAPI_TEST_PG_URL'], 'ACME DNS-01 across two instances on one PostgreSQL', () => {
  // Instance two is reached only through its DNS port; `close` stops both.
  let one: TestApp
  let owner: TestAccount
  let portTwo: number
  let close: (() => Promise<void>) | undefined
  const domain = 'two-instances.nl'

  before(async () => {
    const portOne = await freePort()
    do portTwo = await freePort()
    while (portTwo === portOne)
    ;({ one, close } = await twoInstances({
      envs: [{ HOSTAPI_DNS_PORT: String(portOne) }, { HOSTAPI_DNS_PORT: String(portTwo) }],
    }))
    owner = await one.account()
    await insertZone(one.ctx.db, owner.accountId, domain)
  })
  after(async () => {
    await close?.()
  })

  test("PATCH through instance one → instance two's DNS server answers it", async () => {
    const name = `_acme-challenge.${domain}`
    // Instance two has the zone cached (the name answered NODATA) before the change.
    assert.equal((await queryUdp(portTwo, name, 'TXT')).answers!.length, 0)
    const patched = await one.request('PATCH', `/api/v2/domains/${domain}/dns`, {
      key: owner.key,
      body: { record: { type: 'TXT', name: '_acme-challenge', value: 'from-instance-one', ttl: 120 } },
    })
    assert.equal(patched.status, 200, patched.text)
    await eventually(async () => txtOf(await queryUdp(portTwo, name, 'TXT')).includes('from-instance-one'), {
      what: 'the other instance serves the value',
    })
  })
})
