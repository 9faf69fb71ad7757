import { after, before, it } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { forEachDialect, rawRows, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { freePort, insertZone } from './helpers/dns.js'
import { describeWithPebble, startPebble, type Pebble } from './helpers/pebble.js'
import { certificatePackage } from './helpers/certificates.js'
import { certificateNames, openssl, opensslCsr, opensslVerify } from './helpers/pki.js'
import { ManualClock } from '../src/clock.js'
import { AUDIT_FAILED } from '../src/modules/certificates/issuance.service.js'
import { createPrivateKey } from 'node:crypto'
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

// Pebble's leaves last 40 days here; hostapi renews those that end within 30 (the default).
const LEAF_DAYS = 40
const EAB_KID = 'kid-hostapi'
const EAB_HMAC = 'zWNDZM6eQGHWpSRTPal5eIUYFTu7EajVIoguysqZ9wG44nMEtx3MUAsUDkMTQ12W'

// Issuance through the CA: dns-01, http-01, refusals, external account binding; faults and renewal: certificates-acme-renewal.
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
     * app's clock, which is a manual one here: each look at work a job does moves it a second, so a retry comes due.
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

    it(`dns-01 with auto_setup_dns: an apex and wildcard certificate from request to ACT (${dialect})`, async () => {
      const zone = 'acme-apex.test'
      await insertZone(t.ctx.db, a.accountId, zone, { records: [{ type: 'A', name: zone, value: '192.0.2.1' }] })
      const id = await certificatePackage(t, a, 2)
      const csr = opensslCsr(zone, [zone, `*.${zone}`])
      const started = Date.now()
      const r = await t.request('POST', `/certificates/${id}/request`, {
        key: a.key,
        body: { csr, validation_method: 'dns', auto_setup_dns: true },
      })
      assert.equal(r.status, 200, r.text)
      // The request does not wait for the CA: the answer has none of the CA's values yet.
      assert.equal(r.body.data.certificate_status, 'PEN')
      assert.deepEqual(r.body.data.validation?.dns_records ?? [], [], 'no CA values in the answer')

      const c = await settled(id)
      const elapsed = Date.now() - started
      assert.equal(c.certificate_status, 'ACT', c.status_message)
      console.log(`# ACME dns-01 issuance (${dialect}): request to ACT in ${elapsed} ms`)
      // The CA's own dns-01 values, one per authorization (the apex and the wildcard share the name).
      assert.equal(c.validation.dns_records.length, 2)
      for (const rec of c.validation.dns_records) {
        assert.equal(rec.name, `_acme-challenge.${zone}`)
        assert.match(rec.value, /^[A-Za-z0-9_-]{43}$/)
        assert.equal(rec.auto_created, true)
      }
      assert.match(await verifies(c), /OK$/)
      assert.deepEqual(certificateNames(c.certificate), { cn: zone, sans: [zone, `*.${zone}`] })
      assert.equal(openssl(['x509', '-noout', '-pubkey'], c.certificate), openssl(['req', '-noout', '-pubkey'], csr))
      // The validation records are gone from the customer's zone again.
      assert.deepEqual(await txtIn(zone, `_acme-challenge.${zone}`), [])
      // One account for the installation, its key sealed at rest, its URL kept.
      const accounts = await rawRows(t.config.database, 'select * from acme_accounts')
      assert.equal(accounts.length, 1)
      assert.doesNotMatch(String(accounts[0].account_key), /PRIVATE KEY/)
      assert.match(String(accounts[0].account_url), /^https:\/\/127\.0\.0\.1:\d+\/my-account\//)
    })

    it(`http-01: the file to serve, fetched by the CA from the customer's web server (${dialect})`, async () => {
      const zone = 'acme-web.test'
      const name = `www.${zone}`
      await insertZone(t.ctx.db, a.accountId, zone, { records: [{ type: 'A', name, value: '127.0.0.1' }] })
      const id = await certificatePackage(t, a, 1)
      const r = await t.request('POST', `/certificates/${id}/request`, {
        key: a.key,
        body: { csr: opensslCsr(name, [name]), validation_method: 'http' },
      })
      assert.equal(r.status, 200, r.text)
      // The order is made by the job: the file appears on the certificate then.
      const shown = await challengeFiles(id)
      assert.equal(shown.length, 1)
      const url = new URL(shown[0].url)
      assert.equal(url.host, name)
      assert.match(url.pathname, /^\/\.well-known\/acme-challenge\/[A-Za-z0-9_-]+$/)
      await consistently(
        async () =>
          assert.equal((await get(id)).certificate_status, 'PEN', 'nothing is validated before the file is served'),
        { what: 'the certificate waits for its file', forMs: 1500, intervalMs: 250 },
      )
      files.files.set(url.pathname, shown[0].content)
      const c = await settled(id)
      assert.equal(c.certificate_status, 'ACT', c.status_message)
      assert.match(await verifies(c), /OK$/)
      assert.deepEqual(certificateNames(c.certificate), { cn: name, sans: [name] })
      assert.ok(files.requests.some((line) => line.startsWith(name)))
    })

    it(`refuses email validation with a 400 under ACME (${dialect})`, async () => {
      const id = await certificatePackage(t, a, 1)
      const r = await t.request('POST', `/certificates/${id}/request`, {
        key: a.key,
        body: {
          csr: opensslCsr('mail.acme-apex.test'),
          validation_method: 'email',
          approver_email: 'admin@acme-apex.test',
        },
      })
      assert.equal(r.status, 400, r.text)
      assert.match(r.body.status_description, /ACME certificates cannot be validated by email/)
      assert.equal((await get(id)).certificate_status, 'NEW')
    })

    it(`a name the CA refuses: status ERR with the CA's problem detail (${dialect})`, async () => {
      const zone = 'refused-acme.test'
      await insertZone(t.ctx.db, a.accountId, zone)
      const id = await certificatePackage(t, a, 1)
      const r = await t.request('POST', `/certificates/${id}/request`, {
        key: a.key,
        body: { csr: opensslCsr(zone), validation_method: 'dns', auto_setup_dns: true },
      })
      assert.equal(r.status, 200, r.text)
      const c = await settled(id)
      assert.equal(c.certificate_status, 'ERR')
      assert.match(c.status_message, /^The CA refused the request: .*forbidden by policy.*refused-acme\.test/)
      // The operator finds it in the audit log: the job's entry for the certificate, with the status of a failure.
      assert.deepEqual(await jobAudit(t, id), [{ account_id: a.accountId, method: 'JOB', status: AUDIT_FAILED }])
    })

    it(`external account binding: a CA requiring it issues with the kid and HMAC key given (${dialect})`, async () => {
      const dnsPort = await freePort()
      const eabPebble = await startPebble({ dnsPort, httpPort: files.port, eab: { [EAB_KID]: EAB_HMAC } })
      // Everything the app logs, at every level, to search for the secrets afterwards.
      const { log, logged } = capturedLog('trace')
      const other = await startTestApp(dialect, {
        log,
        env: {
          HOSTAPI_DNS_PORT: String(dnsPort),
          HOSTAPI_JOBS: '1',
          HOSTAPI_JOB_POLL_MS: '50',
          HOSTAPI_CA_DRIVER: 'acme',
          HOSTAPI_ACME_DIRECTORY: eabPebble.directoryUrl,
          HOSTAPI_ACME_CA_BUNDLE: eabPebble.caBundle,
          HOSTAPI_ACME_EAB_KID: EAB_KID,
          HOSTAPI_ACME_EAB_HMAC_KEY: EAB_HMAC,
        },
      })
      try {
        const b = await other.account('EAB customer')
        const zone = 'acme-eab.test'
        await insertZone(other.ctx.db, b.accountId, zone)
        const id = await certificatePackage(other, b, 1)
        const r = await other.request('POST', `/certificates/${id}/request`, {
          key: b.key,
          body: { csr: opensslCsr(zone, [zone]), validation_method: 'dns', auto_setup_dns: true },
        })
        assert.equal(r.status, 200, r.text)
        const c = await settled(id, other, b.key)
        assert.equal(c.certificate_status, 'ACT', c.status_message)
        assert.match(await verifies(c, eabPebble), /OK$/)
        const accounts = await rawRows(other.config.database, 'select directory_url from acme_accounts')
        assert.deepEqual(
          accounts.map((row) => row.directory_url),
          [eabPebble.directoryUrl],
        )
        assert.ok(!pebble.log().includes(EAB_HMAC) && !eabPebble.log().includes(EAB_HMAC))
        // Neither the HMAC key nor the account's private key is in what hostapi logged, in any encoding.
        const [row] = await rawRows(other.config.database, 'select account_key from acme_accounts')
        const key = other.ctx.secrets.box.open(
          String(row.account_key),
          `acme_accounts.${eabPebble.directoryUrl}.account_key`,
        )
        const jwk = createPrivateKey(key).export({ format: 'jwk' })
        const secrets = {
          hmac: EAB_HMAC,
          'hmac (base64)': Buffer.from(EAB_HMAC, 'base64url').toString('base64'),
          'account key (PEM)': key.split('\n')[1],
          'account key (JWK d)': String(jwk.d),
        }
        assert.ok(logged().includes('registered the ACME account'), 'the log was captured')
        for (const [what, secret] of Object.entries(secrets)) assert.ok(!logged().includes(secret), `${what} logged`)
      } finally {
        await other.close()
        await eabPebble.close()
      }
    })
  })
})
