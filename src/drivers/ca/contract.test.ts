import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { openDatabase, migrate, type Database } from '../../db/database.js'
import { systemClock } from '../../clock.js'
import { forEachDialect, freshDatabase, tempDir } from '../../../test/helpers/app.js'
import { certificateNames, openssl, opensslVerify } from '../../../test/helpers/pki.js'
import { CertificateRejected, type CertificateAuthority } from './ca.js'
import { BuiltinCa } from './builtin.js'
import { SecretBox } from '../../lib/secret-box.js'
import { randomBytes } from 'node:crypto'

/** A CSR made by openssl itself (an oracle independent of hostapi's code), PEM. */
function opensslCsr(dir: string, key: string, cn: string, sans: string[]): string {
  const keyFile = path.join(dir, `key-${Math.random().toString(36).slice(2)}.pem`)
  const newkey = key.startsWith('ec:')
    ? ['-newkey', 'ec', '-pkeyopt', `ec_paramgen_curve:${key.slice(3)}`]
    : ['-newkey', key]
  const san = sans.length ? ['-addext', `subjectAltName=${sans.map((s) => `DNS:${s}`).join(',')}`] : []
  return execFileSync(
    'openssl',
    ['req', '-new', ...newkey, '-nodes', '-keyout', keyFile, '-subj', `/CN=${cn}`, ...san],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
  )
}

/** The fields of a challenge request these tests do not vary (the builtin CA reads neither). */
const asked = { accountId: 1, csr: '' }

interface Harness {
  ca: CertificateAuthority
  /** Publishes a TXT value where the CA looks for `accountId`'s records. */
  publishTxt(accountId: number, fqdn: string, value: string): void
  /** A second instance of the same CA (another process on the same database), when the driver has state. */
  sibling?(): CertificateAuthority
  close(): Promise<void>
}

/** The behaviour every CA driver must have. */
export function caDriverContract(name: string, make: () => Promise<Harness>) {
  describe(`CA driver contract: ${name}`, () => {
    let h: Harness
    let dir: string
    before(async () => {
      h = await make()
      dir = tempDir()
    })
    after(async () => {
      await h.close()
      fs.rmSync(dir, { recursive: true, force: true })
    })

    it('signs with one CA from every instance on the same database', async () => {
      if (!h.sibling) return
      // Runs first, on an empty database: three instances start at once and settle on one CA.
      const [a, b] = [h.sibling(), h.sibling()]
      const [ra, rb, rc] = await Promise.all([a.rootCertificate(), b.rootCertificate(), h.ca.rootCertificate()])
      assert.equal(ra, rb)
      assert.equal(ra, rc)
      const csr = opensslCsr(dir, 'ec:prime256v1', 'x.example.com', [])
      const issued = await b.issue({ csr, names: ['x.example.com'], notAfter: new Date(Date.now() + 30 * 86_400_000) })
      assert.match(opensslVerify(ra, issued.intermediate, issued.certificate), /OK$/)
    })
    it('asks for one TXT record per base name for dns, with a new value each time', async () => {
      const names = ['example.com', '*.example.com', 'www.shop.example.com']
      const one = await h.ca.createChallenge({ ...asked, names, method: 'dns', approverEmail: null })
      const two = await h.ca.createChallenge({ ...asked, names, method: 'dns', approverEmail: null })
      assert.equal(one.method, 'dns')
      assert.equal(one.dnsRecords.length, 2, 'the wildcard is validated at its base name')
      for (const r of one.dnsRecords) assert.equal(r.type, 'TXT')
      assert.deepEqual(one.dnsRecords.map((r) => r.name).sort(), [
        '_pki-validation.example.com',
        '_pki-validation.www.shop.example.com',
      ])
      assert.notEqual(one.dnsRecords[0].value, two.dnsRecords[0].value)
      assert.ok(one.dnsRecords[0].value.length >= 20)
    })

    it('is not validated until every record holds the value, in the requesting account only', async () => {
      const names = ['a.example.net', 'b.example.net']
      const challenge = await h.ca.createChallenge({ ...asked, names, method: 'dns', approverEmail: null })
      const unmet = await h.ca.validate({ accountId: 1, names, challenge })
      assert.equal(unmet.valid, false)
      assert.ok(!unmet.valid && unmet.reason.includes('_pki-validation.a.example.net'))
      h.publishTxt(1, challenge.dnsRecords[0].name, challenge.dnsRecords[0].value)
      h.publishTxt(2, challenge.dnsRecords[1].name, challenge.dnsRecords[1].value)
      h.publishTxt(1, challenge.dnsRecords[1].name, 'some other value')
      assert.equal((await h.ca.validate({ accountId: 1, names, challenge })).valid, false)
      h.publishTxt(1, challenge.dnsRecords[1].name, challenge.dnsRecords[1].value)
      assert.deepEqual(await h.ca.validate({ accountId: 1, names, challenge }), { valid: true })
    })

    it('gives files to serve for http and https, and refuses wildcards there', async () => {
      const c = await h.ca.createChallenge({
        ...asked,
        names: ['example.org', 'www.example.org'],
        method: 'https',
        approverEmail: null,
      })
      assert.equal(c.httpFiles.length, 2)
      assert.match(c.httpFiles[0].url, /^https:\/\/example\.org\/\.well-known\/pki-validation\/[A-Za-z0-9]+\.txt$/)
      assert.ok(c.httpFiles[0].content.length > 0)
      await assert.rejects(
        h.ca.createChallenge({ ...asked, names: ['*.example.org'], method: 'http', approverEmail: null }),
        CertificateRejected,
      )
    })

    it('accepts only an approver mailbox at a domain covering every name for email', async () => {
      const names = ['www.example.org', 'shop.example.org']
      const c = await h.ca.createChallenge({ ...asked, names, method: 'email', approverEmail: 'Admin@Example.org' })
      assert.equal(c.approverEmail, 'admin@example.org')
      for (const bad of ['info@example.org', 'admin@www.example.org', 'admin@evil.test', null]) {
        await assert.rejects(
          h.ca.createChallenge({ ...asked, names, method: 'email', approverEmail: bad }),
          CertificateRejected,
          String(bad),
        )
      }
    })

    for (const key of ['rsa:2048', 'ec:prime256v1', 'ec:secp384r1']) {
      it(`signs a ${key} CSR into a certificate that openssl verifies against the root and intermediate`, async () => {
        const csr = opensslCsr(dir, key, 'www.example.com', ['www.example.com', 'example.com'])
        const wanted = new Date(Date.now() + 90 * 86_400_000)
        const issued = await h.ca.issue({ csr, names: ['www.example.com', 'example.com'], notAfter: wanted })
        assert.match(opensslVerify(await h.ca.rootCertificate(), issued.intermediate, issued.certificate), /OK$/)
        assert.deepEqual(certificateNames(issued.certificate), {
          cn: 'www.example.com',
          sans: ['www.example.com', 'example.com'],
        })
        assert.ok(issued.notAfter.getTime() <= wanted.getTime())
        assert.ok(issued.notAfter.getTime() > Date.now() + 89 * 86_400_000)
        const serial = openssl(['x509', '-noout', '-serial'], issued.certificate).trim().split('=')[1]
        assert.equal(serial.toLowerCase().replace(/^0+/, ''), issued.serialNumber.replace(/^0+/, ''))
        // The certificate certifies the CSR's key.
        assert.equal(
          openssl(['x509', '-noout', '-pubkey'], issued.certificate),
          openssl(['req', '-noout', '-pubkey'], csr),
        )
      })
    }

    it('keeps a certificate within 398 days whatever was paid for', async () => {
      const csr = opensslCsr(dir, 'ec:prime256v1', 'long.example.com', [])
      const issued = await h.ca.issue({
        csr,
        names: ['long.example.com'],
        notAfter: new Date(Date.now() + 3 * 365 * 86_400_000),
      })
      assert.ok(issued.notAfter.getTime() - issued.notBefore.getTime() <= 398 * 86_400_000)
    })

    it('refuses a CSR with a bad signature, a weak key, or nothing readable', async () => {
      const csr = opensslCsr(dir, 'rsa:2048', 'www.example.com', [])
      const der = Buffer.from(csr.replace(/-----[A-Z ]+-----|\s+/g, ''), 'base64')
      der[der.length - 5] ^= 0xff
      const tampered = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`
      const notAfter = new Date(Date.now() + 30 * 86_400_000)
      await assert.rejects(h.ca.issue({ csr: tampered, names: ['www.example.com'], notAfter }), CertificateRejected)
      const weak = opensslCsr(dir, 'rsa:1024', 'weak.example.com', [])
      await assert.rejects(h.ca.issue({ csr: weak, names: ['weak.example.com'], notAfter }), CertificateRejected)
      await assert.rejects(h.ca.issue({ csr: 'not a csr', names: ['www.example.com'], notAfter }), CertificateRejected)
      await assert.rejects(h.ca.issue({ csr, names: ['not a name'], notAfter }), CertificateRejected)
    })

    it('has a self-signed CA root', async () => {
      const root = await h.ca.rootCertificate()
      const text = openssl(['x509', '-noout', '-text'], root)
      assert.match(text, /CA:TRUE/)
      assert.match(opensslVerify(root, root, root, null), /OK$/)
    })
  })
}

forEachDialect((dialect) => {
  caDriverContract(`built-in CA (${dialect})`, async () => {
    const dir = tempDir()
    const fresh = await freshDatabase(dialect, dir)
    const database: Database = openDatabase(fresh.database)
    await migrate(database.db, database.schema)
    const zones = new Map<string, string[]>()
    const lookup = async (accountId: number, fqdn: string) => zones.get(`${accountId} ${fqdn}`) ?? []
    const box = new SecretBox(randomBytes(32))
    const make = () => new BuiltinCa(database.db, systemClock, lookup, box)
    return {
      ca: make(),
      publishTxt: (accountId, fqdn, value) =>
        zones.set(`${accountId} ${fqdn}`, [...(zones.get(`${accountId} ${fqdn}`) ?? []), value]),
      sibling: make,
      close: async () => {
        await database.close()
        await fresh.drop()
        fs.rmSync(dir, { recursive: true, force: true })
      },
    }
  })
})

forEachDialect((dialect) => {
  describe(`built-in CA storage (${dialect})`, () => {
    it('signs only with a CA that is stored: one created in a write that did not last is made again', async () => {
      const dir = tempDir()
      const fresh = await freshDatabase(dialect, dir)
      const database: Database = openDatabase(fresh.database)
      try {
        await migrate(database.db, database.schema)
        const ca = new BuiltinCa(database.db, systemClock, async () => [], new SecretBox(randomBytes(32)))
        const first = await ca.rootCertificate()
        // As if the insert had been rolled back (a dry run): the CA is gone from the database.
        await database.db.deleteFrom('ca_authorities').execute()
        const second = await ca.rootCertificate()
        assert.notEqual(second, first)
        const stored = await database.db.selectFrom('ca_authorities').select('root_cert').executeTakeFirstOrThrow()
        assert.equal(stored.root_cert, second)
        // Once read from the database it stays: the same root on every call.
        assert.equal(await ca.rootCertificate(), second)
        assert.equal(await ca.rootCertificate(), second)
      } finally {
        await database.close()
        await fresh.drop()
        fs.rmSync(dir, { recursive: true, force: true })
      }
    })
  })
})
