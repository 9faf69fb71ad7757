import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { openDatabase, ownTables, type Database } from '../../db/database.js'
import { migrate } from '../../db/migrate.js'
import { systemClock } from '../../clock.js'
import { forEachDialect, freshDatabase, tempDir } from '../../../test/helpers/app.js'
import { certificateNames, openssl, opensslVerify } from '../../../test/helpers/pki.js'
import pino from 'pino'
import {
  CertificateRejected,
  type CertificateAuthority,
  type Challenge,
  type IssuedCertificate,
  type ValidationMethod,
} from './ca.js'
import { BuiltinCa } from './builtin.js'
import { AcmeCa } from './acme.js'
import { describeWithPebble, startChallTestSrv, startPebble } from '../../../test/helpers/pebble.js'
import { freePort } from '../../../test/helpers/dns.js'
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

/** The fields of a challenge request these tests do not vary (neither CA reads them). */
const asked = { accountId: 1, csr: '' }

interface Harness {
  ca: CertificateAuthority
  /** Publishes a TXT value where the CA looks for `accountId`'s records. */
  publishTxt(accountId: number, fqdn: string, value: string): Promise<void>
  /** The root that verifies what the CA issues: its own, or the one a browser's trust store holds for it. */
  trustAnchor(): Promise<string>
  /** The label of the CA's DNS validation records (`_pki-validation`, ACME's `_acme-challenge`). */
  txtLabel: string
  /** The URL of a validation file the CA asks for `name` and `method`. */
  httpFileUrl: (name: string, method: 'http' | 'https') => RegExp
  /**
   * Whether the CA ends a leaf when the customer's paid term ends (the built-in CA); an ACME CA sets the leaf's
   * lifetime itself (Let's Encrypt and pebble refuse a notAfter in the order) and hostapi renews it.
   */
  honoursPaidTerm: boolean
  /** A second instance of the same CA (another process on the same database), when the driver has state. */
  sibling?(): CertificateAuthority
  close(): Promise<void>
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

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

    /** The challenge with its records or files: a CA that creates it remotely fills it in at the first check. */
    async function challengeFor(names: string[], method: ValidationMethod, ca = h.ca): Promise<Challenge> {
      const created = await ca.createChallenge({ ...asked, names, method, approverEmail: null })
      if (created.dnsRecords.length || created.httpFiles.length) return created
      const first = await ca.validate({ accountId: 1, names, challenge: created })
      assert.equal(first.valid, false)
      assert.ok(first.challenge, 'a challenge answered empty is filled in at the first check')
      return first.challenge
    }

    /** A certificate through the whole flow: a dns challenge, its records published, validated, then signed. */
    async function issueFor(csr: string, names: string[], notAfter: Date, ca = h.ca): Promise<IssuedCertificate> {
      let challenge = await challengeFor(names, 'dns', ca)
      for (const r of challenge.dnsRecords) await h.publishTxt(1, r.name, r.value)
      for (let i = 0; ; i++) {
        const result = await ca.validate({ accountId: 1, names, challenge })
        if (result.valid) break
        // A CA may answer a new challenge (an ACME order made again after its check failed): it is published too.
        if (result.challenge) {
          challenge = result.challenge
          for (const r of challenge.dnsRecords) await h.publishTxt(1, r.name, r.value)
        }
        if (i === 40) assert.fail(`not validated: ${result.reason}`)
        await sleep(250)
      }
      return ca.issue({ csr, names, notAfter, challenge })
    }

    it('signs with one CA from every instance on the same database', async () => {
      if (!h.sibling) return
      // Runs first, on an empty database: three instances start at once and settle on one CA (one ACME account).
      const [a, b] = [h.sibling(), h.sibling()]
      const notAfter = new Date(Date.now() + 30 * 86_400_000)
      const issued = await Promise.all(
        [a, b, h.ca].map((ca, i) =>
          issueFor(
            opensslCsr(dir, 'ec:prime256v1', `x${i}.example.com`, [`x${i}.example.com`]),
            [`x${i}.example.com`],
            notAfter,
            ca,
          ),
        ),
      )
      const root = await h.trustAnchor()
      for (const c of issued) assert.match(opensslVerify(root, c.intermediate, c.certificate), /OK$/)
      const [ra, rb, rc] = await Promise.all([a.rootCertificate(), b.rootCertificate(), h.ca.rootCertificate()])
      assert.equal(ra, rb)
      assert.equal(ra, rc)
    })

    it('asks for TXT records at the base names for dns, with a new value each time', async () => {
      const names = ['example.com', '*.example.com', 'www.shop.example.com']
      const one = await challengeFor(names, 'dns')
      const two = await challengeFor(names, 'dns')
      assert.equal(one.method, 'dns')
      for (const r of one.dnsRecords) assert.equal(r.type, 'TXT')
      // The wildcard is validated at its base name (ACME asks a second value there, for its own authorization).
      assert.deepEqual([...new Set(one.dnsRecords.map((r) => r.name))].sort(), [
        `${h.txtLabel}.example.com`,
        `${h.txtLabel}.www.shop.example.com`,
      ])
      const values = new Set(two.dnsRecords.map((r) => r.value))
      for (const r of one.dnsRecords) {
        assert.ok(!values.has(r.value))
        assert.ok(r.value.length >= 20)
      }
    })

    it('is not validated until every record holds the value, in the requesting account only', async () => {
      const names = ['a.example.net', 'b.example.net']
      const challenge = await challengeFor(names, 'dns')
      const unmet = await h.ca.validate({ accountId: 1, names, challenge })
      assert.equal(unmet.valid, false)
      // The reason names a record still missing (which one first is the CA's order of its authorizations).
      const missing = names.map((n) => `${h.txtLabel}.${n}`)
      assert.ok(!unmet.valid && missing.some((m) => unmet.reason.includes(m)), !unmet.valid && unmet.reason)
      const [first, second] = [0, 1].map((i) => challenge.dnsRecords.filter((r) => r.name.endsWith(names[i])))
      for (const r of first) await h.publishTxt(1, r.name, r.value)
      for (const r of second) await h.publishTxt(2, r.name, r.value)
      for (const r of second) await h.publishTxt(1, r.name, 'some other value')
      assert.equal((await h.ca.validate({ accountId: 1, names, challenge })).valid, false)
      for (const r of second) await h.publishTxt(1, r.name, r.value)
      assert.deepEqual(await h.ca.validate({ accountId: 1, names, challenge }), { valid: true })
    })

    it('gives files to serve for http and https, and refuses wildcards there', async () => {
      for (const method of ['http', 'https'] as const) {
        const c = await challengeFor(['example.org', 'www.example.org'], method)
        assert.equal(c.httpFiles.length, 2)
        for (const name of ['example.org', 'www.example.org'])
          assert.ok(
            c.httpFiles.some((f) => h.httpFileUrl(name, method).test(f.url)),
            `${method} ${name}`,
          )
        assert.ok(c.httpFiles[0].content.length > 0)
        await assert.rejects(
          h.ca.createChallenge({ ...asked, names: ['*.example.org'], method, approverEmail: null }),
          CertificateRejected,
        )
      }
    })

    it('offers email only when it declares it, with an approver mailbox at a domain covering every name', async () => {
      const names = ['www.example.org', 'shop.example.org']
      if (!h.ca.validationMethods.includes('email')) {
        const approverEmail = 'admin@example.org'
        await assert.rejects(
          h.ca.createChallenge({ ...asked, names, method: 'email', approverEmail }),
          CertificateRejected,
        )
        return
      }
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
        const issued = await issueFor(csr, ['www.example.com', 'example.com'], wanted)
        assert.match(opensslVerify(await h.trustAnchor(), issued.intermediate, issued.certificate), /OK$/)
        assert.deepEqual(certificateNames(issued.certificate), {
          cn: 'www.example.com',
          sans: ['www.example.com', 'example.com'],
        })
        assert.ok(issued.notAfter.getTime() <= wanted.getTime())
        if (h.honoursPaidTerm) assert.ok(issued.notAfter.getTime() > Date.now() + 89 * 86_400_000)
        const serial = openssl(['x509', '-noout', '-serial'], issued.certificate).trim().split('=')[1]
        assert.equal(serial.toLowerCase().replace(/^0+/, ''), issued.serialNumber.replace(/^0+/, ''))
        const ends = openssl(['x509', '-noout', '-enddate'], issued.certificate).trim().split('=')[1]
        assert.equal(Math.floor(issued.notAfter.getTime() / 1000), new Date(ends).getTime() / 1000)
        // The certificate certifies the CSR's key.
        assert.equal(
          openssl(['x509', '-noout', '-pubkey'], issued.certificate),
          openssl(['req', '-noout', '-pubkey'], csr),
        )
      })
    }

    it('keeps a certificate within 398 days whatever was paid for', async () => {
      const csr = opensslCsr(dir, 'ec:prime256v1', 'long.example.com', ['long.example.com'])
      const issued = await issueFor(csr, ['long.example.com'], new Date(Date.now() + 3 * 365 * 86_400_000))
      assert.ok(issued.notAfter.getTime() - issued.notBefore.getTime() <= 398 * 86_400_000)
    })

    it('refuses a CSR with a bad signature, a weak key, or nothing readable', async () => {
      const csr = opensslCsr(dir, 'rsa:2048', 'www.example.com', [])
      const der = Buffer.from(csr.replace(/-----[A-Z ]+-----|\s+/g, ''), 'base64')
      der[der.length - 5] ^= 0xff
      const tampered = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`
      const notAfter = new Date(Date.now() + 30 * 86_400_000)
      await assert.rejects(issueFor(tampered, ['www.example.com'], notAfter), CertificateRejected)
      const weak = opensslCsr(dir, 'rsa:1024', 'weak.example.com', [])
      await assert.rejects(issueFor(weak, ['weak.example.com'], notAfter), CertificateRejected)
      await assert.rejects(issueFor('not a csr', ['www.example.com'], notAfter), CertificateRejected)
      await assert.rejects(issueFor(csr, ['not a name'], notAfter), CertificateRejected)
    })

    it('signs without a challenge exactly when it declares it does (demo data relies on it)', async () => {
      const csr = opensslCsr(dir, 'ec:prime256v1', 'unvalidated.example.com', ['unvalidated.example.com'])
      const signing = h.ca.issue({
        csr,
        names: ['unvalidated.example.com'],
        notAfter: new Date(Date.now() + 30 * 86_400_000),
      })
      if (!h.ca.signsWithoutChallenge) return void (await assert.rejects(signing, CertificateRejected))
      const issued = await signing
      assert.match(opensslVerify(await h.trustAnchor(), issued.intermediate, issued.certificate), /OK$/)
    })

    it('has a self-signed CA root, or none when its roots are in the trust stores', async () => {
      const root = await h.ca.rootCertificate()
      if (root === null) {
        assert.equal(h.honoursPaidTerm, false, 'only an ACME CA holds no root')
        return
      }
      assert.equal(root, await h.trustAnchor())
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
    const make = () => new BuiltinCa(ownTables(database.db), systemClock, lookup, box)
    return {
      ca: make(),
      publishTxt: async (accountId, fqdn, value) => {
        zones.set(`${accountId} ${fqdn}`, [...(zones.get(`${accountId} ${fqdn}`) ?? []), value])
      },
      trustAnchor: async () => (await make().rootCertificate())!,
      txtLabel: '_pki-validation',
      httpFileUrl: (name, method) =>
        new RegExp(`^${method}://${name.replace(/\./g, '\\.')}/\\.well-known/pki-validation/[A-Za-z0-9]+\\.txt$`),
      honoursPaidTerm: true,
      sibling: make,
      close: async () => {
        await database.close()
        await fresh.drop()
        fs.rmSync(dir, { recursive: true, force: true })
      },
    }
  })
})

// pebble resolves through pebble-challtestsrv, whose TXT records the harness sets: what a customer publishes in
// public DNS. The driver's own check before it asks the CA reads the account's records, as hostapi's zones hold them.
describeWithPebble('ACME CA driver (pebble)', () => {
  forEachDialect((dialect) => {
    caDriverContract(`ACME CA (${dialect})`, async () => {
      const dir = tempDir()
      const fresh = await freshDatabase(dialect, dir)
      const database: Database = openDatabase(fresh.database)
      await migrate(database.db, database.schema)
      const dns = await startChallTestSrv()
      // Leaves of 80 days, below the 90 a customer might pay for, as at Let's Encrypt.
      const pebble = await startPebble({
        dnsPort: dns.dnsPort,
        httpPort: await freePort(),
        validitySeconds: 80 * 86_400,
      })
      const zones = new Map<string, string[]>()
      const lookup = async (accountId: number, fqdn: string) => zones.get(`${accountId} ${fqdn}`) ?? []
      const box = new SecretBox(randomBytes(32))
      const opts = {
        directoryUrl: pebble.directoryUrl,
        email: null,
        eab: null,
        caBundle: pebble.caBundle,
        httpPort: 80,
        renewDays: 30,
      }
      const log = pino({ level: 'silent' })
      const make = () => new AcmeCa(ownTables(database.db), systemClock, lookup, async () => [], box, opts, log)
      return {
        ca: make(),
        publishTxt: async (accountId, fqdn, value) => {
          const values = [...(zones.get(`${accountId} ${fqdn}`) ?? []), value]
          zones.set(`${accountId} ${fqdn}`, values)
          // The CA's DNS server keeps the latest values at a name only: an answer of every value the tests ever
          // published there grows past what it can send.
          await dns.clearTxt(fqdn)
          for (const v of values.slice(-4)) await dns.addTxt(fqdn, v)
        },
        trustAnchor: () => pebble.root(),
        txtLabel: '_acme-challenge',
        // http-01 is fetched over http on port 80 whatever the customer asked: the CA's rule, not hostapi's.
        httpFileUrl: (name) =>
          new RegExp(`^http://${name.replace(/\./g, '\\.')}/\\.well-known/acme-challenge/[A-Za-z0-9_-]+$`),
        honoursPaidTerm: false,
        sibling: make,
        close: async () => {
          await pebble.close()
          await dns.close()
          await database.close()
          await fresh.drop()
          fs.rmSync(dir, { recursive: true, force: true })
        },
      }
    })
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
        const ca = new BuiltinCa(ownTables(database.db), systemClock, async () => [], new SecretBox(randomBytes(32)))
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
