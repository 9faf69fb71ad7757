import { after, before, it } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { forEachDialect, rawRows, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { freePort, insertZone } from './helpers/dns.js'
import { describeWithPebble, startPebble, type Pebble } from './helpers/pebble.js'
import { certificatePackage } from './helpers/certificates.js'
import { certificateNames, opensslCsr, opensslVerify } from './helpers/pki.js'
import { ManualClock } from '../src/clock.js'
import { AUDIT_WAITING_FOR_CA } from '../src/modules/certificates/issuance.service.js'
import pino from 'pino'
import { consistently, eventually } from './helpers/wait.js'

/** A web server on loopback serving the files a test puts in `files` (path → content), as http-01 wants. */
async function startFileServer(port: number) {
  const files = new Map<string, string>()
  const requests: string[] = []
  const server = http.createServer((req, res) => {
    requests.push(`${req.headers.host} ${req.url}`)
    const body = files.get(req.url ?? '')
    res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'text/plain' })
    res.end(body ?? 'not found')
  })
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    files,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

/** A logger at `level` that keeps what it writes, and what it has written so far. */
function capturedLog(level: string) {
  const lines: string[] = []
  return {
    log: pino({ level }, { write: (line: string) => lines.push(line) }),
    logged: () => lines.join(''),
  }
}

/** The audit log's entries of the issuance job for certificate `id`. */
const jobAudit = async (app: TestApp, id: number) =>
  (
    await rawRows(
      app.config.database,
      `select account_id, method, status from audit_log where method = 'JOB' and path = '/api/v2/certificates/${id}'`,
    )
  ).map((r) => ({ account_id: Number(r.account_id), method: r.method, status: Number(r.status) }))

/** A time as the API shows it (`YYYY-MM-DD HH:MM:SS`, UTC). */
const shownTime = (text: string) => new Date(`${text.replace(' ', 'T')}Z`).getTime()

// Pebble's leaves last 40 days here; hostapi renews those that end within 30 (the default).
const LEAF_DAYS = 40

// Issuance through a CA that rejects nonces or cannot be reached, and renewal before expiry.
describeWithPebble('certificates through an ACME CA (pebble)', () => {
  forEachDialect((dialect) => {
    let pebble: Pebble
    let files: Awaited<ReturnType<typeof startFileServer>>
    let t: TestApp
    let a: TestAccount
    // The main app's clock: the renewal test moves it (last, as it leaves the app 15 days ahead).
    const clock = new ManualClock()

    before(async () => {
      const dnsPort = await freePort()
      files = await startFileServer(await freePort())
      pebble = await startPebble({
        dnsPort,
        httpPort: files.port,
        blocked: ['refused-acme.test'],
        validitySeconds: LEAF_DAYS * 86_400,
      })
      t = await startTestApp(dialect, {
        clock,
        env: {
          HOSTAPI_DNS_PORT: String(dnsPort),
          HOSTAPI_JOBS: '1',
          HOSTAPI_JOB_POLL_MS: '50',
          HOSTAPI_CA_DRIVER: 'acme',
          HOSTAPI_ACME_DIRECTORY: pebble.directoryUrl,
          HOSTAPI_ACME_EMAIL: 'hostmaster@example.com',
          HOSTAPI_ACME_CA_BUNDLE: pebble.caBundle,
          HOSTAPI_ACME_HTTP_PORT: String(files.port),
        },
      })
      a = await t.account('ACME customer')
    })
    after(async () => {
      await t?.close()
      await files?.close()
      await pebble?.close()
    })

    const get = async (id: number, app = t, key = a.key) => {
      const r = await app.request('GET', `/certificates/${id}`, { key })
      assert.equal(r.status, 200, r.text)
      return r.body.data
    }
    /**
     * A job attempt that failed (the CA slow to answer on a loaded machine) is tried again after its backoff on the
     * app's clock, which these tests move by hand: each look at work a job does moves it a second, so a retry comes due.
     */
    const retriesComeDue = (app: TestApp) => {
      if (app === t) clock.advance(1_000)
    }
    /** Waits for the certificate to leave PEN (the job runner works meanwhile). */
    const settled = (id: number, app = t, key = a.key, ms = 30_000) =>
      eventually(
        async () => {
          retriesComeDue(app)
          const c = await get(id, app, key)
          assert.notEqual(c.certificate_status, 'PEN', c.status_message)
          return c
        },
        { what: `certificate ${id} leaves PEN`, timeoutMs: ms, intervalMs: 100 },
      )
    const txtIn = async (zone: string, fqdn: string): Promise<string[]> => {
      const r = await t.request('GET', `/domains/${zone}/dns`, { key: a.key })
      return r.body.data.records
        .filter((x: { type: string; name: string }) => x.type === 'TXT' && x.name === `${fqdn}.`)
        .map((x: { value: string }) => x.value)
    }
    const verifies = async (c: { certificate: string; intermediate_certificate: string }, p = pebble) =>
      opensslVerify(await p.root(), c.intermediate_certificate, c.certificate)
    /** The http-01 files the certificate shows once its job made the order (other than a previous `url`). */
    const challengeFiles = (id: number, previous?: string): Promise<{ url: string; content: string }[]> =>
      eventually(
        async () => {
          retriesComeDue(t)
          const shown: { url: string; content: string }[] = (await get(id)).validation?.http_files ?? []
          return shown.length > 0 && shown[0].url !== previous && shown
        },
        { what: `a new http-01 file on certificate ${id}`, timeoutMs: 15_000, intervalMs: 100 },
      )

    it(`half of the nonces rejected (badNonce): issuance completes through retries (${dialect})`, async () => {
      const dnsPort = await freePort()
      const flaky = await startPebble({ dnsPort, httpPort: files.port, env: { PEBBLE_WFE_NONCEREJECT: '50' } })
      const { log, logged } = capturedLog('debug')
      const other = await startTestApp(dialect, {
        log,
        env: {
          HOSTAPI_DNS_PORT: String(dnsPort),
          HOSTAPI_JOBS: '1',
          HOSTAPI_JOB_POLL_MS: '50',
          HOSTAPI_CA_DRIVER: 'acme',
          HOSTAPI_ACME_DIRECTORY: flaky.directoryUrl,
          HOSTAPI_ACME_CA_BUNDLE: flaky.caBundle,
        },
      })
      try {
        const b = await other.account('Customer of a flaky CA')
        const zone = 'acme-nonce.test'
        await insertZone(other.ctx.db, b.accountId, zone)
        const ids = [await certificatePackage(other, b, 1), await certificatePackage(other, b, 1)]
        for (const [i, id] of ids.entries()) {
          const name = `n${i}.${zone}`
          const r = await other.request('POST', `/certificates/${id}/request`, {
            key: b.key,
            body: { csr: opensslCsr(name, [name]), validation_method: 'dns', auto_setup_dns: true },
          })
          assert.equal(r.status, 200, r.text)
        }
        for (const id of ids) {
          const c = await settled(id, other, b.key, 90_000)
          assert.equal(c.certificate_status, 'ACT', c.status_message)
          assert.match(await verifies(c, flaky), /OK$/)
        }
        const attempts = await rawRows(
          other.config.database,
          `select attempts, status from jobs where kind = 'certificates.issue' and attempts > 1`,
        )
        assert.match(flaky.log(), /Configured to reject 50% of good nonces/)
        // Each rejected nonce was answered badNonce, and the request was sent again with the fresh one (RFC 8555
        // 6.5); what still failed after that failed the job's attempt, which the queue retried.
        const rejected = [...logged().matchAll(/"badNonces":(\d+)/g)].reduce((n, m) => n + Number(m[1]), 0)
        assert.ok(rejected > 0, 'pebble rejected some nonces')
        console.log(
          `# ACME with half the nonces rejected (${dialect}): ${rejected} badNonce answers resent, ` +
            `${attempts.length} job attempts retried`,
        )
        // A job whose attempt failed all the same (a request's nonce rejected six times) succeeded on a later one.
        for (const row of attempts) assert.equal(row.status, 'done')
      } finally {
        await other.close()
        await flaky.close()
      }
    })

    it(`an unreachable ACME server: the API answers without it, the work waits in the queue (${dialect})`, async () => {
      const closedPort = await freePort()
      const other = await startTestApp(dialect, {
        env: {
          HOSTAPI_CA_DRIVER: 'acme',
          HOSTAPI_ACME_DIRECTORY: `https://127.0.0.1:${closedPort}/dir`,
        },
      })
      try {
        const b = await other.account('Customer of an unreachable CA')
        const { order_id: orderId } = await other.ctx.services.certificates.order(b.accountId, {
          product_id: 1,
          duration: 1,
        })
        await other.ctx.jobs.drain()
        const { items } = await other.ctx.services.orders.get(b.accountId, orderId)
        const id = (items[0].result as { certificate_id: number }).certificate_id
        const r = await other.request('POST', `/certificates/${id}/request`, {
          key: b.key,
          body: { csr: opensslCsr('down.acme-apex.test'), validation_method: 'dns' },
        })
        // Answered though the CA cannot be reached: the request only queued the work.
        assert.equal(r.status, 200, r.text)
        const [queued] = await rawRows(
          other.config.database,
          `select attempts from jobs where kind = 'certificates.issue' and payload like '%"certificateId":${id}%'`,
        )
        assert.equal(Number(queued?.attempts), 0, 'the issuance is queued, not attempted')
        await other.ctx.jobs.drain()
        const c = await get(id, other, b.key)
        assert.equal(c.certificate_status, 'PEN')
        assert.match(
          c.status_message,
          /^Waiting for the CA: The ACME server https:\/\/127\.0\.0\.1:\d+ cannot be reached/,
        )
        const jobs = await rawRows(
          other.config.database,
          `select id, status, attempts, max_attempts, last_error from jobs
           where kind = 'certificates.issue' and payload like '%"certificateId":${id}%'`,
        )
        assert.equal(jobs.length, 1)
        assert.equal(jobs[0].status, 'queued')
        assert.ok(Number(jobs[0].max_attempts) > 5)
        assert.match(String(jobs[0].last_error), /cannot be reached/)
        // A second attempt after the back-off: still waiting, and the audit log has the wait once, not per attempt.
        await eventually(
          async () => {
            await other.ctx.jobs.drain()
            const [again] = await rawRows(other.config.database, `select attempts from jobs where id = ${jobs[0].id}`)
            assert.ok(Number(again.attempts) >= 2, `attempts: ${again.attempts}`)
          },
          { what: 'a second attempt after the back-off', timeoutMs: 15_000, intervalMs: 250 },
        )
        assert.deepEqual(await jobAudit(other, id), [
          { account_id: b.accountId, method: 'JOB', status: AUDIT_WAITING_FOR_CA },
        ])
        // The waiting work is in the metrics: one certificates.issue job queued; waiting out its retry back-off it is
        // not due, so it is not counted as work the queue is behind on.
        const metrics = await other.ctx.ops.metrics.text()
        assert.match(metrics, /^hostapi_jobs\{kind="certificates\.issue",status="queued"\} 1$/m)
        assert.doesNotMatch(metrics, /^hostapi_jobs_oldest_age_seconds\{kind="certificates\.issue"/m)
      } finally {
        await other.close()
      }
    })

    it(`renews before expiry with the stored CSR: automatic with auto_setup_dns, else shown (${dialect})`, async () => {
      const zone = 'acme-renew.test'
      const web = `www.${zone}`
      await insertZone(t.ctx.db, a.accountId, zone, { records: [{ type: 'A', name: web, value: '127.0.0.1' }] })
      // One certificate validated by dns with auto_setup_dns, one by http-01 with a file the customer serves.
      const auto = await certificatePackage(t, a, 1)
      let r = await t.request('POST', `/certificates/${auto}/request`, {
        key: a.key,
        body: { csr: opensslCsr(zone, [zone]), validation_method: 'dns', auto_setup_dns: true },
      })
      assert.equal(r.status, 200, r.text)
      const byHand = await certificatePackage(t, a, 1)
      r = await t.request('POST', `/certificates/${byHand}/request`, {
        key: a.key,
        body: { csr: opensslCsr(web, [web]), validation_method: 'http' },
      })
      assert.equal(r.status, 200, r.text)
      const files0 = await challengeFiles(byHand)
      for (const f of files0) files.files.set(new URL(f.url).pathname, f.content)
      const [auto0, hand0] = [await settled(auto), await settled(byHand)]
      assert.equal(auto0.certificate_status, 'ACT', auto0.status_message)
      assert.equal(hand0.certificate_status, 'ACT', hand0.status_message)
      assert.ok(shownTime(auto0.valid_until) < clock.now().getTime() + (LEAF_DAYS + 1) * 86_400_000)

      // 40 days left of a one-year package: not due yet.
      assert.equal(await t.ctx.services.certificates.renewal.renewDue(), 0)
      // 15 days later 25 are left: the hourly scan (queued at start, due now) requests both again.
      clock.advance(15 * 86_400_000)
      let hand1 = await eventually(
        async () => {
          retriesComeDue(t)
          const c = await get(byHand)
          return c.certificate_status !== 'ACT' && c
        },
        { what: 'the renewal of the http-01 certificate starts', timeoutMs: 10_000 },
      )
      assert.equal(hand1.certificate_status, 'PEN')
      // The old leaf is still the certificate's while the new challenge waits for the customer.
      assert.equal(hand1.certificate, hand0.certificate)
      assert.equal(hand1.serial_number, hand0.serial_number)
      const files1 = await challengeFiles(byHand, files0[0].url)
      await consistently(
        async () => {
          hand1 = await get(byHand)
          assert.equal(hand1.certificate_status, 'PEN', 'nothing is validated before the new file is served')
        },
        { what: 'the renewal waits for its file', forMs: 1500, intervalMs: 250 },
      )
      assert.equal(hand1.certificate, hand0.certificate)
      for (const f of files1) files.files.set(new URL(f.url).pathname, f.content)

      for (const [id, before] of [
        [auto, auto0],
        [byHand, hand0],
      ] as const) {
        // The scan may not have reached the dns certificate when the http one turned PEN.
        const c = await eventually(
          async () => {
            const now = await settled(id)
            return now.serial_number !== before.serial_number && now
          },
          { what: `certificate ${id} renewed`, timeoutMs: 15_000, intervalMs: 100 },
        ).catch(() => settled(id))
        assert.equal(c.certificate_status, 'ACT', c.status_message)
        assert.notEqual(c.serial_number, before.serial_number)
        assert.notEqual(c.certificate, before.certificate)
        assert.match(await verifies(c), /OK$/)
        assert.equal(c.csr, before.csr)
        assert.deepEqual(certificateNames(c.certificate), certificateNames(before.certificate))
        assert.ok(shownTime(c.valid_until) > shownTime(before.valid_until))
      }
      // The renewal's validation records are gone from the zone again.
      assert.deepEqual(await txtIn(zone, `_acme-challenge.${zone}`), [])
    })
  })
})
