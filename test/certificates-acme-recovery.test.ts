// ACME issuance that recovers instead of failing: the challenge is checked on the nameservers that serve the zone
// (PowerDNS lagging or down), a validation the CA failed is tried again in a new order, and an account or order
// the CA forgot (pebble restarted) is made again.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { forEachDialect, rawRows, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { freePort, insertZone } from './helpers/dns.js'
import { describeWithPebble, startChallTestSrv, startPebble, type ChallTestSrv, type Pebble } from './helpers/pebble.js'
import { describeWithPowerDns, startPowerDns, type PowerDns } from './helpers/powerdns.js'
import { opensslCsr } from './helpers/pki.js'
import { certificatePackage } from './helpers/certificates.js'
import { consistently, eventually } from './helpers/wait.js'

const acmeEnv = (pebble: Pebble) => ({
  HOSTAPI_JOBS: '1',
  HOSTAPI_JOB_POLL_MS: '50',
  HOSTAPI_CA_DRIVER: 'acme',
  HOSTAPI_ACME_DIRECTORY: pebble.directoryUrl,
  HOSTAPI_ACME_EMAIL: 'hostmaster@example.com',
  HOSTAPI_ACME_CA_BUNDLE: pebble.caBundle,
})

/** A certificate as the API shows it, the fields these tests read. */
interface Shown {
  certificate_status: string
  status_message: string
  validation?: { dns_records?: { name: string; value: string }[] }
}

/** Reads certificate `id`, and waits for it to leave PEN (or for `until` to hold). */
function certificates(t: TestApp, a: TestAccount) {
  const get = async (id: number): Promise<Shown> => {
    const r = await t.request('GET', `/certificates/${id}`, { key: a.key })
    assert.equal(r.status, 200, r.text)
    return r.body.data
  }
  const until = (id: number, done: (c: Shown) => boolean | Promise<boolean>, ms = 45_000, everyMs = 100) =>
    eventually(
      async () => {
        const c = await get(id)
        assert.ok(await done(c), `still ${c.certificate_status}: ${c.status_message}`)
        return c
      },
      { what: `certificate ${id}`, timeoutMs: ms, intervalMs: everyMs },
    )
  const request = async (zone: string) => {
    const id = await certificatePackage(t, a, 1)
    const r = await t.request('POST', `/certificates/${id}/request`, {
      key: a.key,
      body: { csr: opensslCsr(zone, [zone]), validation_method: 'dns', auto_setup_dns: true },
    })
    assert.equal(r.status, 200, r.text)
    return id
  }
  return { get, until, request, settled: (id: number) => until(id, (c) => c.certificate_status !== 'PEN') }
}

describeWithPebble('ACME issuance that recovers', () => {
  describeWithPowerDns('the challenge checked on PowerDNS, which serves the zone', () => {
    forEachDialect((dialect) => {
      let pdns: PowerDns
      let pebble: Pebble
      let t: TestApp
      let a: TestAccount
      before(async () => {
        pdns = await startPowerDns()
        pebble = await startPebble({ dnsPort: pdns.dnsPort, httpPort: await freePort() })
        t = await startTestApp(dialect, {
          env: {
            ...acmeEnv(pebble),
            HOSTAPI_DNS_DRIVER: 'powerdns',
            HOSTAPI_POWERDNS_URL: pdns.url,
            HOSTAPI_POWERDNS_API_KEY: pdns.apiKey,
            HOSTAPI_POWERDNS_DNS_ADDRESS: `127.0.0.1:${pdns.dnsPort}`,
            HOSTAPI_POWERDNS_PROBE_MS: '200',
          },
        })
        a = await t.account('ACME customer')
      })
      after(async () => {
        await t?.close()
        await pebble?.close()
        await pdns?.close()
      })

      it(`waits while PowerDNS is down instead of failing, and issues once it serves the record (${dialect})`, async () => {
        const c = certificates(t, a)
        const zone = `lagging-${dialect}.test`
        await insertZone(t.ctx.db, a.accountId, zone, { records: [{ type: 'A', name: zone, value: '192.0.2.1' }] })
        await t.ctx.services.zoneDelivery.resync([zone])
        await pdns.stop()
        let id: number
        try {
          id = await c.request(zone)
          // The record is in hostapi's database but not on the nameserver the CA asks: the CA is not asked yet.
          const waiting = await c.until(id, (x) => /is not served with the value yet/.test(String(x.status_message)))
          assert.equal(waiting.certificate_status, 'PEN')
          await consistently(
            async () => {
              const still = await c.get(id)
              assert.equal(still.certificate_status, 'PEN', still.status_message)
            },
            { what: 'the certificate stays pending while the nameserver lags', forMs: 3000, intervalMs: 250 },
          )
        } finally {
          await pdns.start()
        }
        const done = await c.settled(id)
        assert.equal(done.certificate_status, 'ACT', done.status_message)
      })
    })
  })

  forEachDialect((dialect) => {
    describe(`a validation the CA failed, an account and an order it forgot (${dialect})`, () => {
      let challtestsrv: ChallTestSrv
      let pebble: Pebble
      let t: TestApp
      let a: TestAccount
      let dnsPort: number
      before(async () => {
        dnsPort = await freePort()
        challtestsrv = await startChallTestSrv()
      })
      after(async () => {
        await t?.close()
        await pebble?.close()
        await challtestsrv?.close()
      })
      const startWith = async (pebbleDns: number, env?: Record<string, string>) => {
        await t?.close()
        await pebble?.close()
        pebble = await startPebble({ dnsPort: pebbleDns, httpPort: await freePort(), env })
        t = await startTestApp(dialect, { env: { ...acmeEnv(pebble), HOSTAPI_DNS_PORT: String(dnsPort) } })
        a = await t.account('ACME customer')
      }

      it('tries a failed validation again in a new order instead of ending in ERR', async () => {
        // hostapi sees its own records on its DNS server; the CA asks another one, which at first has none.
        await startWith(challtestsrv.dnsPort)
        const c = certificates(t, a)
        const zone = `second-order-${dialect}.test`
        await insertZone(t.ctx.db, a.accountId, zone, { records: [{ type: 'A', name: zone, value: '192.0.2.1' }] })
        const id = await c.request(zone)
        const first = await c.until(id, (x) => x.validation?.dns_records?.length === 1)
        const failed = await c.until(id, (x) => /trying again with a new order/.test(String(x.status_message)))
        assert.equal(failed.certificate_status, 'PEN')
        assert.match(String(failed.status_message), /^Validation of .* failed at the CA/)
        // The CA's server gets every value the new orders show.
        const published = new Set<string>()
        // A new order is checked by the CA a second after it shows its record: the test publishes it at once (read
        // often, so a loaded machine does not make the test slower than the CA).
        const done = await c.until(
          id,
          async (x) => {
            const records =
              (x as { validation?: { dns_records?: { name: string; value: string }[] } }).validation?.dns_records ?? []
            for (const r of records)
              if (!published.has(r.value)) {
                published.add(r.value)
                await challtestsrv.addTxt(r.name, r.value)
              }
            return x.certificate_status !== 'PEN'
          },
          45_000,
          20,
        )
        assert.equal(done.certificate_status, 'ACT', done.status_message)
        assert.notEqual(done.validation?.dns_records?.[0].value, first.validation?.dns_records?.[0].value)
      })

      it('registers again when the CA forgot the account, and makes a new order when it forgot the order', async () => {
        await startWith(dnsPort)
        const c = certificates(t, a)
        const zone = `forgotten-${dialect}.test`
        await insertZone(t.ctx.db, a.accountId, zone, { records: [{ type: 'A', name: zone, value: '192.0.2.1' }] })
        const one = await c.settled(await c.request(zone))
        assert.equal(one.certificate_status, 'ACT', one.status_message)
        const [before] = await rawRows(t.config.database, 'select account_url from acme_accounts')
        // The CA forgets everything: the account and every order.
        await pebble.restart()
        const two = await c.settled(await c.request(zone))
        assert.equal(two.certificate_status, 'ACT', two.status_message)
        const [after] = await rawRows(t.config.database, 'select account_url from acme_accounts')
        assert.ok(after.account_url && after.account_url !== before.account_url)
        // An order made, then forgotten by the CA before it was validated.
        const id = await c.request(zone)
        await c.until(id, (x) => (x.validation?.dns_records?.length ?? 0) > 0)
        await pebble.restart()
        const three = await c.settled(id)
        assert.equal(three.certificate_status, 'ACT', three.status_message)
      })

      // With reuse, a CA hands out an order whose authorizations it validated for an earlier one: nothing to check.
      for (const reuse of ['0', '100'])
        it(`makes a new order when the CA forgot a validated order before it signed (authorization reuse ${reuse} %)`, async () => {
          await startWith(dnsPort, { PEBBLE_AUTHZREUSE: reuse })
          const c = certificates(t, a)
          const zone = `forgotten-ready-${reuse}-${dialect}.test`
          await insertZone(t.ctx.db, a.accountId, zone, { records: [{ type: 'A', name: zone, value: '192.0.2.1' }] })
          const first = await c.settled(await c.request(zone))
          assert.equal(first.certificate_status, 'ACT', first.status_message)
          // The CA forgets everything between the validation it passed and the signing (the first time only).
          const ca = t.ctx.drivers.ca
          const issue = ca.issue.bind(ca)
          let restarts = 0
          ca.issue = async (req) => {
            if (restarts++ === 0) await pebble.restart()
            return issue(req)
          }
          const id = await c.request(zone)
          const seen = new Set<string>()
          const done = await c.until(id, (x) => {
            seen.add(String(x.status_message))
            return x.certificate_status !== 'PEN'
          })
          assert.equal(done.certificate_status, 'ACT', `${done.status_message}; seen: ${[...seen].join(' | ')}`)
          assert.ok(restarts >= 2, 'signed after the restart')
          // Every reason shown names what the CA answered: none is empty.
          for (const m of seen) assert.doesNotMatch(m, /\(\)|: $/, [...seen].join(' | '))
        })
    })
  })
})
