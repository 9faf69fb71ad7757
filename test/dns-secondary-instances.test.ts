import { after, before, it } from 'node:test'
import assert from 'node:assert/strict'
import { describeWithEnv, type TestAccount } from './helpers/app.js'
import { twoInstances, type Instances } from './helpers/instances.js'
import { makeDomain } from './helpers/fixtures/domains.js'
import { freePort, queryUdp, within } from './helpers/dns.js'
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
const CONVERGE_MS = 5000

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

    before(async () => {
      if (knotMissing()) return
      const [p1, p2, knotPort] = await ports(3)
      dnsOne = p1!
      dnsTwo = p2!
      inst = await twoInstances({
        env: { HOSTAPI_DNS_SECONDARIES: `127.0.0.1:${knotPort}` },
        envs: [{ HOSTAPI_DNS_PORT: String(dnsOne) }, { HOSTAPI_DNS_PORT: String(dnsTwo) }],
      })
      a = await inst.one.account('Two primaries')
      d = await makeDomain(inst.one, a)
      // The instance that does not commit is the one Knot asks first.
      knot = await startKnot({ port: knotPort, zones: [d], primaryPort: dnsTwo, morePrimaryPorts: [dnsOne] })
    })
    after(async () => {
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

    it(`converges to the committed serial within ${CONVERGE_MS / 1000} s after each of ${BURSTS} bursts`, {
      skip: knotMissing(),
    }, async (ctx) => {
      await within(15_000, async () => (await soaSerial(d, knot.port)) === (await committedSerial())).catch((err) => {
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
        const ms = await within(CONVERGE_MS, async () => (await soaSerial(d, knot.port)) === target).catch(() => null)
        if (ms === null) stale.push(burst)
        times.push(ms ?? Date.now() - start)
      }
      ctx.diagnostic(`convergence after each burst (ms): ${times.join(', ')}; stale bursts: ${stale.length}`)
      assert.deepEqual(stale, [], `bursts after which Knot was still stale after ${CONVERGE_MS} ms`)
    })
  },
)
