import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../src/clock.js'
import {
  forEachDialect,
  rawRows,
  startTestApp,
  TEST_SECRET_KEY,
  type TestAccount,
  type TestApp,
} from './helpers/app.js'
import { keyId, parseSecretKey, SecretBox } from '../src/lib/secret-box.js'
import { makeCertificatePackage } from './helpers/fixtures/certificates.js'
import { certificateNames, csrNames, keyMatches, openssl, opensslCsr, opensslVerify } from './helpers/pki.js'

const csrBody = (common_name: string, extra: Record<string, unknown> = {}) => ({
  common_name,
  organization: 'Example B.V.',
  email: 'admin@example.com',
  country: 'NL',
  state: 'Noord-Holland',
  locality: 'Amsterdam',
  ...extra,
})

// Issuing certificates: HTTP, DNS and e-mail validation, the CSRs refused, the DNS record waited for.
forEachDialect((dialect) => {
  describe(`certificates over HTTPS (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    let b: TestAccount
    const clock = new ManualClock()
    before(async () => {
      t = await startTestApp(dialect, { clock })
      a = await t.account('Certificates A')
      b = await t.account('Certificates B')
    })
    after(() => t.close())

    const get = (id: number, key = a.key) => t.request('GET', `/certificates/${id}`, { key })
    const request = (id: number, body: unknown, key = a.key) =>
      t.request('POST', `/certificates/${id}/request`, { key, body })
    /** Puts `name` in `owner`'s account as an active domain with an empty zone. */
    const hostDomain = (owner: TestAccount, name: string) =>
      t.ctx.services.domains.create(t.ctx.db, {
        accountId: owner.accountId,
        name,
        renewalDate: '2030-01-01',
        nameserverProfile: null,
        nameservers: [],
        contacts: {},
      })
    /** The TXT values at `fqdn` in the zone, as the DNS API shows them. */
    const txtIn = async (zone: string, fqdn: string, key = a.key): Promise<string[]> => {
      const r = await t.request('GET', `/domains/${zone}/dns`, { key })
      assert.equal(r.status, 200, JSON.stringify(r.body))
      return r.body.data.records
        .filter((x: { type: string; name: string }) => x.type === 'TXT' && x.name === `${fqdn}.`)
        .map((x: { value: string }) => x.value)
    }

    it('issues a certificate over HTTP validation that verifies against the returned chain', async () => {
      const id = await makeCertificatePackage(t, a)
      const gen = await t.request('POST', '/certificates/csr', { key: a.key, body: csrBody('shop.example.com') })
      const r = await request(id, { csr: gen.body.data.csr, validation_method: 'http' })
      assert.equal(r.status, 200, JSON.stringify(r.body))
      assert.equal(r.body.status_description, 'Certificate requested')
      assert.equal(r.body.data.certificate_status, 'PEN')
      assert.equal(r.body.data.requested, true)
      assert.equal(r.body.data.common_name, 'shop.example.com')
      assert.equal(r.body.data.validation.method, 'http')
      assert.match(
        r.body.data.validation.http_files[0].url,
        /^http:\/\/shop\.example\.com\/\.well-known\/pki-validation\//,
      )
      assert.equal(r.body.data.certificate, null)

      await t.ctx.jobs.drain()
      const c = (await get(id)).body.data
      assert.equal(c.certificate_status, 'ACT')
      assert.equal(c.status_message, null)
      assert.match(
        opensslVerify((await t.ctx.drivers.ca.rootCertificate())!, c.intermediate_certificate, c.certificate),
        /OK$/,
      )
      assert.deepEqual(certificateNames(c.certificate), { cn: 'shop.example.com', sans: ['shop.example.com'] })
      assert.ok(keyMatches(gen.body.data.private_key, c.certificate, 'x509'), 'the certificate certifies the CSR key')
      assert.match(c.valid_until, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/)
      assert.match(c.serial_number, /^[0-9a-f]+$/)
      assert.match(c.issued_at, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/)

      // A reissue for another key: the current certificate stays until the new one is issued.
      const newCsr = opensslCsr('shop.example.com')
      const reissue = await request(id, { csr: newCsr, validation_method: 'http' })
      assert.equal(reissue.status, 200, JSON.stringify(reissue.body))
      assert.equal(reissue.body.data.certificate_status, 'PEN')
      assert.equal(reissue.body.data.certificate, c.certificate)
      const during = await request(id, { csr: newCsr, validation_method: 'http' })
      assert.deepEqual(during.body, { status: 400, status_description: 'This certificate has already been requested' })
      await t.ctx.jobs.drain()
      const reissued = (await get(id)).body.data
      assert.equal(reissued.certificate_status, 'ACT')
      assert.notEqual(reissued.serial_number, c.serial_number)
      assert.equal(
        openssl(['x509', '-noout', '-pubkey'], reissued.certificate),
        openssl(['req', '-noout', '-pubkey'], newCsr),
      )
    })

    it('keeps the CA private keys in the database sealed with the secret key, not as PEM', async () => {
      // Read straight from the table, after the issuance above.
      const rows = await rawRows(
        t.config.database,
        'select name, root_key, intermediate_key, root_cert from ca_authorities',
      )
      assert.equal(rows.length, 1)
      const sealed = new RegExp(
        `^v1:${keyId(parseSecretKey(TEST_SECRET_KEY)!)}:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+$`,
      )
      // The whole value is the sealed form (no PEM can be in it); it opens, with the key, to the PEM private key.
      // (A check for "MII", the start of base64 DER, matched random ciphertext now and then.)
      const box = new SecretBox(parseSecretKey(TEST_SECRET_KEY)!)
      for (const column of ['root_key', 'intermediate_key']) {
        const value = String(rows[0][column])
        assert.match(value, sealed, column)
        const context = `ca_authorities.${String(rows[0].name)}.${column}`
        assert.match(box.open(value, context), /^-----BEGIN PRIVATE KEY-----/, column)
      }
      assert.match(
        String(rows[0].root_cert),
        /^-----BEGIN CERTIFICATE-----/,
        'certificates are public and stay readable',
      )
    })

    it('issues a DNS-validated certificate for a CSR made by the API, writing and removing the TXT record itself', async () => {
      const zone = `dns-${dialect}-example.nl`
      await hostDomain(a, zone)
      const id = await makeCertificatePackage(t, a)
      const gen = await t.request('POST', '/certificates/csr', { key: a.key, body: csrBody(`www.${zone}`) })
      assert.equal(gen.status, 200)
      const { csr, private_key } = gen.body.data

      const r = await request(id, { csr, validation_method: 'dns', auto_setup_dns: true })
      assert.equal(r.status, 200, JSON.stringify(r.body))
      assert.equal(r.body.data.certificate_status, 'PEN')
      assert.equal(r.body.data.auto_setup_dns, true)
      const [record] = r.body.data.validation.dns_records
      assert.equal(record.name, `_pki-validation.www.${zone}`)
      assert.equal(record.auto_created, true)
      assert.equal(r.body.data.warning, null, 'every record was written')
      assert.deepEqual(await txtIn(zone, record.name), [record.value], 'the validation record is in the zone')

      await t.ctx.jobs.drain()
      const c = (await get(id)).body.data
      assert.equal(c.certificate_status, 'ACT', c.status_message)
      assert.match(
        opensslVerify((await t.ctx.drivers.ca.rootCertificate())!, c.intermediate_certificate, c.certificate),
        /OK$/,
      )
      const asked = csrNames(csr)
      const got = certificateNames(c.certificate)
      assert.equal(got.cn, asked.cn)
      assert.deepEqual(got.sans, asked.sans)
      assert.equal(got.cn, `www.${zone}`)
      assert.ok(keyMatches(private_key, c.certificate, 'x509'))
      assert.deepEqual(await txtIn(zone, record.name), [], 'the validation record is removed once issued')
    })

    it('checks a request with ?test=1 without storing it or writing DNS records', async () => {
      const zone = `dry-${dialect}-example.nl`
      await hostDomain(a, zone)
      const id = await makeCertificatePackage(t, a)
      const r = await t.request('POST', `/certificates/${id}/request?test=1`, {
        key: a.key,
        body: { csr: opensslCsr(`www.${zone}`), validation_method: 'dns', auto_setup_dns: true },
      })
      assert.equal(r.status, 200, JSON.stringify(r.body))
      assert.equal(r.body.data.certificate_status, 'PEN')
      assert.equal(r.body.data.common_name, `www.${zone}`)
      const [record] = r.body.data.validation.dns_records
      assert.equal(record.auto_created, true, 'the record would be written')
      assert.deepEqual(await txtIn(zone, record.name), [], 'but it is not')
      const bad = await t.request('POST', `/certificates/${id}/request?test=1`, {
        key: a.key,
        body: { csr: opensslCsr('*.example.com'), validation_method: 'dns' },
      })
      assert.deepEqual(bad.body, { status: 400, status_description: 'This product does not cover wildcard names' })
      await t.ctx.jobs.drain()
      const c = (await get(id)).body.data
      assert.equal(c.certificate_status, 'NEW')
      assert.equal(c.validation, null)
    })

    it('waits for a DNS record the customer publishes, and keeps other TXT values at that name', async () => {
      const zone = `manual-${dialect}-example.nl`
      await hostDomain(a, zone)
      const names = [`*.${zone}`, zone]
      const id = await makeCertificatePackage(t, a, 2)
      const r = await request(id, { csr: opensslCsr(`*.${zone}`, names), validation_method: 'dns' })
      assert.equal(r.status, 200, JSON.stringify(r.body))
      const records = r.body.data.validation.dns_records
      assert.equal(records.length, 1, 'the wildcard and its base share one record')
      assert.equal(records[0].auto_created, false)
      assert.deepEqual(await txtIn(zone, records[0].name), [])
      await t.ctx.jobs.drain()
      assert.equal((await get(id)).body.data.certificate_status, 'PEN')

      const patch = await t.request('PATCH', `/domains/${zone}/dns`, {
        key: a.key,
        body: { record: { type: 'TXT', name: records[0].name, value: records[0].value, ttl: 300 } },
      })
      assert.equal(patch.status, 200, JSON.stringify(patch.body))
      // A second certificate for the same name, set up automatically, must not overwrite the customer's record.
      const second = await makeCertificatePackage(t, a)
      const r2 = await request(second, { csr: opensslCsr(zone), validation_method: 'dns', auto_setup_dns: true })
      assert.equal(r2.status, 200, JSON.stringify(r2.body))
      assert.equal(r2.body.data.validation.dns_records[0].name, records[0].name)
      assert.deepEqual(
        (await txtIn(zone, records[0].name)).sort(),
        [records[0].value, r2.body.data.validation.dns_records[0].value].sort(),
      )

      clock.advance(2 * 60_000)
      await t.ctx.jobs.drain()
      const c = (await get(id)).body.data
      assert.equal(c.certificate_status, 'ACT', c.status_message)
      assert.deepEqual(certificateNames(c.certificate), { cn: `*.${zone}`, sans: names })
      assert.match(
        opensslVerify((await t.ctx.drivers.ca.rootCertificate())!, c.intermediate_certificate, c.certificate),
        /OK$/,
      )
      assert.equal((await get(second)).body.data.certificate_status, 'ACT')
      assert.deepEqual(
        await txtIn(zone, records[0].name),
        [records[0].value],
        'only the record hostapi wrote is removed',
      )
    })

    it("refuses a name in another account's zone, whatever the validation method", async () => {
      const zone = `other-${dialect}-example.nl`
      await hostDomain(b, zone)
      const id = await makeCertificatePackage(t, a)
      for (const name of [`www.${zone}`, zone]) {
        for (const method of ['dns', 'http', 'https', 'email']) {
          const approver = method === 'email' ? { approver_email: `hostmaster@${zone}` } : {}
          const r = await request(id, {
            csr: opensslCsr(name),
            validation_method: method,
            ...(method === 'dns' ? { auto_setup_dns: true } : {}),
            ...approver,
          })
          assert.deepEqual(
            r.body,
            { status: 400, status_description: `${name} lies in a zone of another account` },
            `${name} by ${method}`,
          )
        }
      }
      assert.deepEqual(await txtIn(zone, `_pki-validation.${zone}`, b.key), [], 'nothing is written into its zone')
      await t.ctx.jobs.drain()
      assert.equal((await get(id)).body.data.certificate_status, 'NEW')
    })

    it('does not issue for a name whose zone another account holds by the time of validation', async () => {
      const zone = `later-${dialect}-example.nl`
      const id = await makeCertificatePackage(t, a)
      const r = await request(id, { csr: opensslCsr(`www.${zone}`), validation_method: 'http' })
      assert.equal(r.status, 200, r.text)
      await hostDomain(b, zone)
      await t.ctx.jobs.drain()
      const c = (await get(id)).body.data
      assert.notEqual(c.certificate_status, 'ACT')
      assert.equal(c.certificate, null)
    })

    it('validates by e-mail only with an approver address at the domain', async () => {
      const id = await makeCertificatePackage(t, a, 3)
      const csr = opensslCsr('www.example.org', ['www.example.org', 'example.org'], 'rsa:2048')
      const none = await request(id, { csr, validation_method: 'email' })
      assert.deepEqual(none.body, {
        status: 400,
        status_description: 'Missing approver_email: it is required for validation_method email',
      })
      const bad = await request(id, { csr, validation_method: 'email', approver_email: 'info@example.org' })
      assert.equal(bad.status, 400)
      assert.match(
        bad.body.status_description,
        /^approver_email must be admin@, administrator@, hostmaster@, postmaster@, webmaster@/,
      )
      const good = await request(id, { csr, validation_method: 'email', approver_email: 'hostmaster@example.org' })
      assert.equal(good.status, 200)
      assert.equal(good.body.data.approver_email, 'hostmaster@example.org')
      assert.equal(good.body.data.validation.approver_email, 'hostmaster@example.org')
      await t.ctx.jobs.drain()
      const c = (await get(id)).body.data
      assert.equal(c.certificate_status, 'ACT')
      assert.deepEqual(certificateNames(c.certificate), {
        cn: 'www.example.org',
        sans: ['www.example.org', 'example.org'],
      })
      assert.deepEqual(c.domains, ['www.example.org', 'example.org'])
    })

    it('refuses CSRs that are not readable, do not verify, or ask for more than the product covers', async () => {
      const id = await makeCertificatePackage(t, a)
      const text = async (csr: string, method = 'dns') => (await request(id, { csr, validation_method: method })).body
      assert.deepEqual(await text('hello'), {
        status: 400,
        status_description: 'Invalid CSR: expected a PEM block -----BEGIN CERTIFICATE REQUEST-----',
      })
      assert.deepEqual(await text('-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----'), {
        status: 400,
        status_description: 'Invalid CSR: it is not a readable PKCS#10 request',
      })
      const good = opensslCsr('www.example.com')
      const der = Buffer.from(good.replace(/-----[A-Z ]+-----|\s+/g, ''), 'base64')
      der[der.length - 3] ^= 0x55
      const tampered = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`
      assert.deepEqual(await text(tampered), {
        status: 400,
        status_description: 'Invalid CSR: its signature does not verify',
      })
      assert.deepEqual(await text(opensslCsr('www.example.com', ['www.example.com', 'example.com'])), {
        status: 400,
        status_description: 'This product covers at most 1 domain name(s)',
      })
      assert.deepEqual(await text(opensslCsr('*.example.com')), {
        status: 400,
        status_description: 'This product does not cover wildcard names',
      })
      assert.deepEqual(await text(opensslCsr('My Server')), {
        status: 400,
        status_description: 'Invalid CSR: the common name "my server" is not a domain name',
      })
      const wildcard = await makeCertificatePackage(t, a, 2)
      const http = await request(wildcard, {
        csr: opensslCsr('*.example.com', ['*.example.com', 'example.com']),
        validation_method: 'http',
      })
      assert.deepEqual(http.body, {
        status: 400,
        status_description: 'Wildcard names can only be validated by dns or email',
      })
      const badMethod = await request(id, { csr: good, validation_method: 'ftp' })
      assert.equal(badMethod.status, 400)
      assert.match(badMethod.body.status_description, /^Invalid validation_method/)
      // Nothing was stored by the refused requests.
      assert.equal((await get(id)).body.data.certificate_status, 'NEW')
    })

    it('waits for a DNS record it cannot find, rechecks later, and fails after seven days', async () => {
      const id = await makeCertificatePackage(t, a)
      const r = await request(id, {
        csr: opensslCsr('unhosted.invalid'),
        validation_method: 'dns',
        auto_setup_dns: true,
      })
      assert.equal(r.status, 200, JSON.stringify(r.body))
      const [record] = r.body.data.validation.dns_records
      assert.deepEqual(
        { ...record, value: typeof record.value },
        { type: 'TXT', name: '_pki-validation.unhosted.invalid', value: 'string', auto_created: false },
      )
      // Still requested, with a warning that the automatic setup could not write the record.
      assert.equal(
        r.body.data.warning,
        'Automatic DNS setup could not write _pki-validation.unhosted.invalid: publish this TXT record yourself',
      )
      await t.ctx.jobs.drain()
      let c = (await get(id)).body.data
      assert.equal(c.certificate_status, 'PEN')
      assert.equal(
        c.status_message,
        'The TXT record _pki-validation.unhosted.invalid does not hold the validation value yet',
      )
      assert.equal(c.certificate, null)
      clock.advance(8 * 24 * 3600_000)
      for (let i = 0; i < 20 && c.certificate_status === 'PEN'; i++) {
        await t.ctx.jobs.drain()
        c = (await get(id)).body.data
      }
      assert.equal(c.certificate_status, 'ERR')
      assert.match(c.status_message, /^Validation failed: The TXT record _pki-validation\.unhosted\.invalid/)
      assert.equal(c.warning, null, 'the warning goes with the wait for validation')
      // A failed certificate may be requested again.
      const again = await request(id, { csr: opensslCsr('again.example.com'), validation_method: 'http' })
      assert.equal(again.status, 200)
      await t.ctx.jobs.drain()
      assert.equal((await get(id)).body.data.certificate_status, 'ACT')
    })
  })
})
