import { createHash, randomBytes } from 'node:crypto'
import type { Clock } from '../../clock.js'
import { iso } from '../../clock.js'
import { isUniqueViolation } from '../../db/errors.js'
import { SecretBox, type SealedColumn } from '../../lib/secret-box.js'
import * as repo from './ca.repository.js'
import type { CaDb } from './ca.repository.js'
import {
  CertificateRejected,
  type CertificateAuthority,
  type Challenge,
  type ChallengeRequest,
  type IssuedCertificate,
  type IssueRequest,
  type ValidationRequest,
  type ValidationResult,
} from './ca.js'
import { baseName, isCertificateName, isSameOrParent } from './names.js'
import { ECDSA_P256, fromPem, loadX509, randomSerial, readCsr, subtle, toPem, type X509 } from './x509.js'

/** Reads the TXT values published at `fqdn`, as the account's own zone (or public DNS) has them. */
export type TxtLookup = (accountId: number, fqdn: string) => Promise<string[]>

/** True when a name lies in a zone hostapi holds for another account than `accountId`. */
export type ZoneHeldElsewhere = (accountId: number, fqdn: string) => Promise<boolean>

/** The label under which DNS validation records live. */
export const DNS_CHALLENGE_LABEL = '_pki-validation'
/** The mailboxes a domain's approver e-mail may use (CA/Browser Forum Baseline Requirements 3.2.2.4.4). */
export const APPROVER_MAILBOXES = ['admin', 'administrator', 'hostmaster', 'postmaster', 'webmaster'] as const

const DAY_MS = 86_400_000
/** Baseline Requirements: at most 398 days; one day of margin. */
const MAX_LEAF_DAYS = 397
const ROOT_YEARS = 20
const INTERMEDIATE_YEARS = 10
const BACKDATE_MS = 60 * 60_000

interface LoadedCa {
  root: X509.X509Certificate
  rootPem: string
  intermediate: X509.X509Certificate
  intermediatePem: string
  intermediateKey: CryptoKey
}

/** The columns of `ca_authorities` that hold private keys, sealed with `secrets`. */
const KEY_COLUMNS = ['root_key', 'intermediate_key'] as const

/**
 * A certificate authority run by hostapi itself: a root and an intermediate generated on first use and
 * stored in the database (so every instance signs with the same CA), which signs real X.509 certificates.
 * Their private keys are stored sealed with `secrets` (the operator's secret key), never in plaintext.
 *
 * Validation: `dns` checks that the TXT record `_pki-validation.<name>` holds the challenge value, reading
 * it through `lookupTxt` (the account's own zone). `http`, `https` and `email` are recorded with their
 * challenge (file to serve, approver address) and accepted as met: this CA cannot reach the customer's web
 * server or mailbox reliably, and is meant for development, testing and private networks. Its root is not
 * in any public trust store. Whatever the method, a name that lies in a zone hostapi holds for another account
 * (`heldElsewhere`) is refused, at the request and again at each validation.
 */
export class BuiltinCa implements CertificateAuthority {
  readonly name = 'builtin'
  readonly validationMethods = ['dns', 'http', 'https', 'email'] as const
  readonly signsWithoutChallenge = true
  private loaded: Promise<LoadedCa> | null = null

  constructor(
    private readonly db: CaDb,
    private readonly clock: Clock,
    private readonly lookupTxt: TxtLookup,
    private readonly secrets: SecretBox,
    private readonly heldElsewhere: ZoneHeldElsewhere = async () => false,
  ) {}

  /** The first of `names` (wildcards by their base) in a zone of another account, or null. */
  private async otherTenantsName(accountId: number, names: string[]): Promise<string | null> {
    for (const n of names) if (await this.heldElsewhere(accountId, baseName(n))) return n
    return null
  }

  async createChallenge(req: ChallengeRequest): Promise<Challenge> {
    const foreign = await this.otherTenantsName(req.accountId, req.names)
    if (foreign) throw new CertificateRejected(foreignNameReason(foreign))
    const token = randomBytes(24).toString('base64url')
    const bases = [...new Set(req.names.map(baseName))]
    const challenge: Challenge = { method: req.method, dnsRecords: [], httpFiles: [], approverEmail: null }
    if (req.method === 'dns') {
      challenge.dnsRecords = bases.map((b) => ({ type: 'TXT', name: `${DNS_CHALLENGE_LABEL}.${b}`, value: token }))
    } else if (req.method === 'http' || req.method === 'https') {
      if (req.names.some((n) => n.startsWith('*.')))
        throw new CertificateRejected('Wildcard names can only be validated by dns or email')
      const file = createHash('sha256').update(token).digest('hex').slice(0, 32).toUpperCase()
      challenge.httpFiles = bases.map((b) => ({
        url: `${req.method}://${b}/.well-known/pki-validation/${file}.txt`,
        content: token,
      }))
    } else {
      const approver = (req.approverEmail ?? '').trim().toLowerCase()
      const at = approver.lastIndexOf('@')
      const mailbox = approver.slice(0, at)
      const domain = approver.slice(at + 1)
      if (
        at < 1 ||
        !(APPROVER_MAILBOXES as readonly string[]).includes(mailbox) ||
        !bases.every((b) => isSameOrParent(domain, b))
      ) {
        throw new CertificateRejected(
          `approver_email must be ${APPROVER_MAILBOXES.join('@, ')}@ at a domain that covers every name of the certificate`,
        )
      }
      challenge.approverEmail = approver
    }
    return challenge
  }

  async validate(req: ValidationRequest): Promise<ValidationResult> {
    const foreign = await this.otherTenantsName(req.accountId, req.names)
    if (foreign) return { valid: false, reason: foreignNameReason(foreign) }
    if (req.challenge.method !== 'dns') return { valid: true }
    for (const record of req.challenge.dnsRecords) {
      const values = await this.lookupTxt(req.accountId, record.name)
      if (!values.includes(record.value)) {
        return { valid: false, reason: `The TXT record ${record.name} does not hold the validation value yet` }
      }
    }
    return { valid: true }
  }

  async issue(req: IssueRequest): Promise<IssuedCertificate> {
    const ca = await this.ca()
    const x509 = await loadX509()
    const csr = await readCsr(req.csr)
    const names = [...new Set(req.names)]
    if (names.length === 0) throw new CertificateRejected('No name to certify')
    for (const n of names)
      if (!isCertificateName(n)) throw new CertificateRejected(`${n} is not a name this CA certifies`)

    const now = this.clock.now()
    const notBefore = new Date(now.getTime() - BACKDATE_MS)
    const notAfter = new Date(
      Math.min(req.notAfter.getTime(), now.getTime() + MAX_LEAF_DAYS * DAY_MS, ca.intermediate.notAfter.getTime()),
    )
    if (notAfter.getTime() <= now.getTime()) throw new CertificateRejected('The certificate would already have expired')
    const isRsa = csr.publicKey.algorithm.name.startsWith('RSA')
    const serialNumber = randomSerial()
    const leaf = await x509.X509CertificateGenerator.create({
      serialNumber,
      subject: [{ CN: [names[0]] }],
      issuer: ca.intermediate.subjectName,
      publicKey: csr.publicKey,
      signingKey: ca.intermediateKey,
      signingAlgorithm: ECDSA_P256,
      notBefore,
      notAfter,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(
          isRsa
            ? x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment
            : x509.KeyUsageFlags.digitalSignature,
          true,
        ),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]),
        new x509.SubjectAlternativeNameExtension(names.map((value) => ({ type: 'dns' as const, value }))),
        await x509.SubjectKeyIdentifierExtension.create(csr.publicKey),
        await x509.AuthorityKeyIdentifierExtension.create(ca.intermediate),
      ],
    })
    return { certificate: pem(leaf), intermediate: ca.intermediatePem, serialNumber, notBefore, notAfter }
  }

  async rootCertificate(): Promise<string | null> {
    return (await this.ca()).rootPem
  }

  private ca(): Promise<LoadedCa> {
    this.loaded ??= this.loadOrCreate().then(
      ({ ca, created }) => {
        // A CA created just now is read again next time: the insert may belong to a transaction that is
        // rolled back (a dry run), and only a stored CA may sign for good.
        if (created) this.loaded = null
        return ca
      },
      (err) => {
        this.loaded = null
        throw err
      },
    )
    return this.loaded
  }

  private async loadOrCreate(): Promise<{ ca: LoadedCa; created: boolean }> {
    let row = await repo.findAuthority(this.db, this.name)
    let created = false
    if (!row) {
      try {
        const generated = await generateCa(this.clock.now())
        await repo.insertAuthority(this.db, {
          name: this.name,
          ...generated,
          root_key: this.secrets.seal(generated.root_key, keyContext(this.name, 'root_key')),
          intermediate_key: this.secrets.seal(generated.intermediate_key, keyContext(this.name, 'intermediate_key')),
          created_at: iso(this.clock.now()),
        })
        created = true
      } catch (err) {
        if (!isUniqueViolation(err)) throw err
      }
      row = await repo.findAuthority(this.db, this.name)
      if (!row) throw new Error('The built-in CA could not be stored')
    }
    const x509 = await loadX509()
    const intermediate = new x509.X509Certificate(row.intermediate_cert)
    const stored = row.intermediate_key
    const keyPem = SecretBox.isSealed(stored)
      ? this.secrets.open(stored, keyContext(row.name, 'intermediate_key'))
      : stored
    const keyDer = fromPem(keyPem, 'PRIVATE KEY')
    if (!keyDer) throw new Error('The built-in CA key cannot be read')
    const intermediateKey = await subtle.importKey('pkcs8', keyDer, ECDSA_P256, false, ['sign'])
    return {
      ca: {
        root: new x509.X509Certificate(row.root_cert),
        rootPem: row.root_cert,
        intermediate,
        intermediatePem: row.intermediate_cert,
        intermediateKey,
      },
      created,
    }
  }
}

const pem = (cert: X509.X509Certificate): string => `${cert.toString('pem')}\n`

const foreignNameReason = (name: string) => `${name} lies in a zone of another account`

/** What a sealed key is bound to: a sealed key copied to another row or column does not open there. */
const keyContext = (name: string, column: (typeof KEY_COLUMNS)[number]) => `ca_authorities.${name}.${column}`

/** The built-in CA's sealed private keys. */
export const CA_SEALED_COLUMNS: SealedColumn[] = KEY_COLUMNS.map((column) => ({
  table: 'ca_authorities',
  column,
  reads: ['name'],
  context: (row) => keyContext(String(row.name), column),
}))

/** A new root (self-signed) and an intermediate signed by it, both ECDSA P-256. */
async function generateCa(now: Date) {
  const x509 = await loadX509()
  const tag = randomBytes(3).toString('hex')
  const notBefore = new Date(now.getTime() - BACKDATE_MS)
  const year = 365 * DAY_MS
  const rootKeys = (await subtle.generateKey(ECDSA_P256, true, ['sign', 'verify'])) as CryptoKeyPair
  const root = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: [{ CN: [`hostapi Root CA ${tag}`] }, { O: ['hostapi'] }],
    keys: rootKeys,
    signingAlgorithm: ECDSA_P256,
    notBefore,
    notAfter: new Date(now.getTime() + ROOT_YEARS * year),
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(rootKeys.publicKey),
    ],
  })
  const intermediateKeys = (await subtle.generateKey(ECDSA_P256, true, ['sign', 'verify'])) as CryptoKeyPair
  const intermediate = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: [{ CN: [`hostapi Issuing CA ${tag}`] }, { O: ['hostapi'] }],
    issuer: root.subjectName,
    publicKey: intermediateKeys.publicKey,
    signingKey: rootKeys.privateKey,
    signingAlgorithm: ECDSA_P256,
    notBefore,
    notAfter: new Date(now.getTime() + INTERMEDIATE_YEARS * year),
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature,
        true,
      ),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]),
      await x509.SubjectKeyIdentifierExtension.create(intermediateKeys.publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(root),
    ],
  })
  return {
    root_cert: pem(root),
    root_key: toPem(await subtle.exportKey('pkcs8', rootKeys.privateKey), 'PRIVATE KEY'),
    intermediate_cert: pem(intermediate),
    intermediate_key: toPem(await subtle.exportKey('pkcs8', intermediateKeys.privateKey), 'PRIVATE KEY'),
  }
}
