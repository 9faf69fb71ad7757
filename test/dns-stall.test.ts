// One tenant's large zone must not stall the others: reading it uncached, and the built-in DNS server's rebuild
// after a change, hold the event loop every tenant shares for a short while at a time only. The app runs in this
// process, so the event-loop delay measured here is the server's; the large answer is read without parsing it.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import https from 'node:https'
import { execFile } from 'node:child_process'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { addRecords, freePort, insertZone, queryUdp } from './helpers/dns.js'

const BIG = 'big-zone.nl'
const SMALL = 'prober.nl'
const RECORDS = 40_000
/**
 * Far above what the fixed code blocks for, far below the >1 s of the defect: CI's two cores are noisy. On a machine
 * busy with other work the bound grows with how much less CPU time this process gets than wall time (see slowdown):
 * a stall is measured in wall time, and so slowed down too.
 */
const BOUND_MS = 250
/** The slowdown is counted up to this factor (the defect blocked for over 15 s on a machine 20 times over-booked). */
const MAX_SLOWDOWN = 10

/** Wall time over this process's CPU time during 100 ms of busy work: 1 on an idle machine, more on a busy one. */
function slowdown(): number {
  const cpu = process.cpuUsage()
  const start = performance.now()
  let x = 0
  while (performance.now() - start < 100) x += Math.sqrt(x + 1)
  const used = process.cpuUsage(cpu)
  const wall = performance.now() - start
  return Math.min(MAX_SLOWDOWN, Math.max(1, wall / ((used.user + used.system) / 1000)))
}

const txt = (i: number) => `r${i} `.padEnd(200, 'abcdefghijklmnopqrstuvwxyz0123456789')

/** A GET whose (large) answer is counted, not kept or parsed: the test's own work stays off the loop. */
function drain(origin: string, path: string, key: string): Promise<{ status: number; bytes: number }> {
  const agent = new https.Agent({ rejectUnauthorized: false })
  return new Promise((resolve, reject) => {
    const req = https.request(new URL(`/api/v2${path}`, origin), { headers: { 'api-key': key }, agent }, (res) => {
      let bytes = 0
      res.on('data', (c: Buffer) => {
        bytes += c.length
      })
      res.on('end', () => {
        agent.destroy()
        resolve({ status: res.statusCode ?? 0, bytes })
      })
    })
    req.on('error', reject)
    req.end()
  })
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0

/**
 * Runs `work` while another tenant sends one request after another and the event loop's delay is sampled; returns
 * the longest delay and that tenant's latencies (ms).
 */
async function measure(t: TestApp, prober: TestAccount, work: () => Promise<void>) {
  const h = monitorEventLoopDelay({ resolution: 5 })
  const latencies: number[] = []
  let done = false
  const probe = (async () => {
    while (!done) {
      const start = performance.now()
      const r = await t.request('GET', `/domains/${SMALL}/dns`, { key: prober.key })
      latencies.push(performance.now() - start)
      assert.equal(r.status, 200, r.text)
    }
  })()
  const before = slowdown()
  h.enable()
  try {
    await work()
  } finally {
    done = true
    h.disable()
    await probe
  }
  const factor = (before + slowdown()) / 2
  const sorted = latencies.sort((a, b) => a - b)
  const result = {
    maxDelayMs: Math.round(h.max / 1e6),
    p50: Math.round(pct(sorted, 0.5)),
    p99: Math.round(pct(sorted, 0.99)),
    probes: sorted.length,
    boundMs: Math.round(BOUND_MS * factor),
  }
  // The figures of a run, for the record (node --test shows a test's diagnostics).
  process.stdout.write(`# ${JSON.stringify(result)}\n`)
  return result
}

forEachDialect((dialect) => {
  describe(`a ${RECORDS}-record zone does not stall other tenants (${dialect})`, { timeout: 600_000 }, () => {
    let t: TestApp
    let port: number
    let owner: TestAccount
    let prober: TestAccount

    before(async () => {
      port = await freePort()
      // Loopback may transfer zones (a range: never sent NOTIFY).
      t = await startTestApp(dialect, {
        // The prober asks back to back for the whole test: the per-key rate limit is not what is measured here.
        env: { HOSTAPI_DNS_PORT: String(port), HOSTAPI_DNS_SECONDARIES: '127.0.0.0/8', HOSTAPI_RATE_LIMIT: '1000000' },
      })
      owner = await t.account()
      prober = await t.account()
      const id = await insertZone(t.ctx.db, owner.accountId, BIG)
      for (let i = 0; i < RECORDS; i += 2000) {
        const batch = Array.from({ length: Math.min(2000, RECORDS - i) }, (_, k) => ({
          type: 'TXT',
          name: `r${i + k}.${BIG}`,
          value: txt(i + k),
        }))
        await addRecords(t.ctx.db, id, batch)
      }
      await insertZone(t.ctx.db, prober.accountId, SMALL, {
        records: [{ type: 'A', name: SMALL, value: '192.0.2.1' }],
      })
      // Warm: the prober's route and the DNS server's small zone.
      assert.equal((await t.request('GET', `/domains/${SMALL}/dns`, { key: prober.key })).status, 200)
      await queryUdp(port, SMALL, 'A')
    })
    after(() => t?.close())

    it('an uncached GET of its zone file holds the event loop briefly', async () => {
      let reply = { status: 0, bytes: 0 }
      const m = await measure(t, prober, async () => {
        reply = await drain(t.origin, `/domains/${BIG}/dns/zone`, owner.key)
      })
      assert.equal(reply.status, 200)
      assert.ok(reply.bytes > RECORDS * 200, `${reply.bytes} bytes`)
      assert.ok(m.maxDelayMs <= m.boundMs, `event loop blocked ${m.maxDelayMs} ms (p50 ${m.p50}, p99 ${m.p99})`)
    })

    it('a change and a query to the built-in DNS server hold the event loop briefly', async () => {
      const m = await measure(t, prober, async () => {
        for (let round = 0; round < 2; round++) {
          const value = `changed ${round}`
          const r = await t.request('PATCH', `/domains/${BIG}/dns`, {
            key: owner.key,
            body: { record: { type: 'TXT', name: `r7.${BIG}`, value } },
          })
          assert.equal(r.status, 200, r.text)
          const answer = await queryUdp(port, `r7.${BIG}`, 'TXT', { timeoutMs: 30_000 })
          const data = (answer.answers?.[0] as { data?: Buffer[] } | undefined)?.data
          assert.equal(Buffer.concat(data ?? []).toString(), value)
        }
      })
      assert.ok(m.maxDelayMs <= m.boundMs, `event loop blocked ${m.maxDelayMs} ms (p50 ${m.p50}, p99 ${m.p99})`)
    })

    it('a zone transfer of it holds the event loop briefly', async () => {
      let lines = 0
      const m = await measure(t, prober, async () => {
        // dig reads the transfer in its own process; only the count of TXT lines comes back.
        const out = await new Promise<string>((resolve, reject) => {
          const cmd = `dig @127.0.0.1 -p ${port} +time=60 +tries=1 AXFR ${BIG} | grep -c 'IN.TXT'`
          execFile('sh', ['-c', cmd], (err, stdout) => (err && !stdout ? reject(err) : resolve(stdout)))
        })
        lines = Number(out.trim())
      })
      assert.equal(lines, RECORDS)
      assert.ok(m.maxDelayMs <= m.boundMs, `event loop blocked ${m.maxDelayMs} ms (p50 ${m.p50}, p99 ${m.p99})`)
    })
  })
})
