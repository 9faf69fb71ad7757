import { after, before, it } from 'node:test'
import assert from 'node:assert/strict'
import { describeWithEnv, type TestAccount } from './helpers/app.js'
import { twoInstances, type Instances } from './helpers/instances.js'
import { makeDomain } from './helpers/fixtures/domains.js'
import { dig, freePort, queryUdp } from './helpers/dns.js'
import { eventually } from './helpers/wait.js'
import { knotMissing, startKnot, type Knot } from './helpers/knot.js'

const soaSerial = async (zone: string, at: number) => {
  const r = await queryUdp(at, zone, 'SOA', { timeoutMs: 500 }).catch(() => null)
  const soa = r?.answers?.find((x) => x.type === 'SOA') as { data: { serial: number } } | undefined
  return soa?.data.serial ?? null
}

/** Free ports, all different. */
async function ports(n: number): Promise<number[]> {
  const out: number[] = []
  while (out.length < n) {
    const p = await freePort()
    if (!out.includes(p)) out.push(p)
  }
  return out
}

const BURSTS = 5
const CONVERGE_MS = 30_000

describeWithEnv(
  ['HOSTAPI_TEST_PG_URL'],
  'a Knot secondary of two instances: asked first, the instance that did not commit answers the committed state',
  () => {
    let inst: Instances
    let knot: Knot
    let a: TestAccount
    let d: string
    let dnsOne: number
    let dnsTwo: number
    let catalogKnot: Knot
    const CATALOG = 'catalog.hostapi.invalid'

    before(async () => {
      if (knotMissing()) return
      const [p1, p2, knotPort, catalogPort] = await ports(4)
      dnsOne = p1!
      dnsTwo = p2!
      inst = await twoInstances({
        env: { HOSTAPI_DNS_SECONDARIES: `127.0.0.1:${knotPort},127.0.0.1:${catalogPort}` },
        envs: [{ HOSTAPI_DNS_PORT: String(dnsOne) }, { HOSTAPI_DNS_PORT: String(dnsTwo) }],
      })
      a = await inst.one.account('Two primaries')
      d = await makeDomain(inst.one, a)
      // The instance that does not commit is the one Knot asks first.
      knot = await startKnot({ port: knotPort, zones: [d], primaryPort: dnsTwo, morePrimaryPorts: [dnsOne] })
      // A second secondary knowing no zone, only the catalog.
      const catalog = { zones: [], catalog: CATALOG, primaryPort: dnsTwo, morePrimaryPorts: [dnsOne] }
      catalogKnot = await startKnot({ port: catalogPort, ...catalog })
    })
    after(async () => {
      await catalogKnot?.close()
      await knot?.close()
      await inst?.close()
    })

    const committedSerial = async () => {
      const row = await inst.one.ctx.db
        .selectFrom('domains')
        .select('zone_serial')
        .where('name', '=', d)
        .executeTakeFirstOrThrow()
      return Number(row.zone_serial)
    }

    it(`converges to the committed serial after each of ${BURSTS} bursts`, {
      skip: knotMissing(),
    }, async (ctx) => {
      await eventually(async () => (await soaSerial(d, knot.port)) === (await committedSerial()), {
        what: 'Knot serves the committed serial',
        timeoutMs: 15_000,
      }).catch((err) => {
        throw new Error(`${err}\n${knot.output()}`)
      })
      const times: number[] = []
      const stale: number[] = []
      for (let burst = 0; burst < BURSTS; burst++) {
        for (let i = 0; i < 4; i++) {
          const record = { type: 'TXT', name: `b${burst}-${i}`, value: `burst ${burst} change ${i}` }
          const r = await inst.one.request('PATCH', `/domains/${d}/dns`, { key: a.key, body: { record } })
          assert.equal(r.status, 200, r.text)
        }
        const target = await committedSerial()
        const start = Date.now()
        const served = await eventually(async () => (await soaSerial(d, knot.port)) === target, {
          what: `Knot serves serial ${target}`,
          timeoutMs: CONVERGE_MS,
        }).catch(() => false)
        if (!served) stale.push(burst)
        times.push(Date.now() - start)
      }
      ctx.diagnostic(`convergence after each burst (ms): ${times.join(', ')}; stale bursts: ${stale.length}`)
      assert.deepEqual(stale, [], `bursts after which Knot was still stale after ${CONVERGE_MS} ms`)
    })

    it('a zone that starts being served reaches a secondary through the catalog zone; one that ends leaves it', {
      skip: knotMissing(),
    }, async (ctx) => {
      const knotHas = async (zone: string) => {
        const r = await queryUdp(catalogKnot.port, zone, 'SOA', { timeoutMs: 500 }).catch(() => null)
        return (r?.answers ?? []).some((x) => x.type === 'SOA')
      }
      // The catalog is the secondaries' only: anyone else is REFUSED, and it cannot be transferred without the ACL.
      assert.match(await dig(dnsOne, '-b', '127.0.0.2', 'SOA', CATALOG), /status: REFUSED/)
      assert.match(await dig(dnsOne, '-b', '127.0.0.2', 'PTR', `x.zones.${CATALOG}`), /status: REFUSED/)
      assert.match(await dig(dnsOne, 'SOA', CATALOG), /status: NOERROR[\s\S]*IN\s+SOA\s+invalid\. invalid\./)
      // Every zone served when the secondary started is there.
      await eventually(() => knotHas(d), { what: 'the catalog secondary serves the zone', timeoutMs: 15_000 }).catch(
        (err) => {
          throw new Error(`${err}\n${catalogKnot.output()}`)
        },
      )
      // A new domain, made active on one instance (the order's last step tells the DNS server).
      const fresh = await makeDomain(inst.one, a)
      await inst.one.ctx.drivers.dns.publish({ domain: fresh, kind: 'zone' })
      let since = Date.now()
      await eventually(() => knotHas(fresh), { what: 'the new zone reaches the secondary', timeoutMs: 10_000 }).catch(
        (err) => {
          throw new Error(`${err}\n${catalogKnot.output()}`)
        },
      )
      const added = Date.now() - since
      assert.ok(await knotHas(d), 'the other zones stay')
      // The domain ends, on the other instance.
      const row = await inst.two.ctx.db
        .updateTable('domains')
        .set({ status: 'pending_cancellation', cancel_at: '2000-01-01' })
        .where('name', '=', fresh)
        .returning('id')
        .executeTakeFirstOrThrow()
      assert.deepEqual(await inst.two.ctx.services.domains.endDomain(row.id), { ended: true })
      since = Date.now()
      await eventually(async () => !(await knotHas(fresh)), {
        what: 'the ended zone leaves the secondary',
        timeoutMs: 10_000,
      })
      const removed = Date.now() - since
      assert.ok(await knotHas(d), 'the other zones stay')
      ctx.diagnostic(
        `catalog: a new zone served by the secondary after ${added} ms, an ended one gone after ${removed} ms`,
      )
    })
  },
)
