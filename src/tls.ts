import fs from 'node:fs'
import path from 'node:path'
import { webcrypto, X509Certificate } from 'node:crypto'
import ipaddr from 'ipaddr.js'
import type { Config } from './config/config.js'
import { loadX509, toPem } from './drivers/ca/x509.js'

export interface TlsMaterial {
  key: string
  cert: string
  /** Where the certificate came from, for the start-up message. */
  source: string
}

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' }
const DAY = 86_400_000
/** A server certificate's lifetime: within the 398 days browsers and macOS accept from any root. */
const LEAF_DAYS = 397
/** A server certificate this close to its end is issued again at start. */
const RENEW_DAYS = 30

const serial = () =>
  Buffer.from(webcrypto.getRandomValues(new Uint8Array(16)))
    .toString('hex')
    .replace(/^[89a-f]/, '1')

const keyPair = async () => (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair
const pkcs8Pem = async (key: CryptoKey) => toPem(await webcrypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY')

/** A root CA (ECDSA P-256, ten years) that signs the local server certificates and nothing else. */
export async function generateRoot(): Promise<{ key: string; cert: string }> {
  const x509 = await loadX509()
  const keys = await keyPair()
  const now = new Date()
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=hostapi local root ${now.toISOString().slice(0, 10)} ${serial().slice(0, 8)}, O=hostapi`,
    notBefore: new Date(now.getTime() - 60_000),
    notAfter: new Date(now.getTime() + 3650 * DAY),
    signingAlgorithm: ALG,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  })
  return { key: await pkcs8Pem(keys.privateKey), cert: `${cert.toString('pem')}\n` }
}

/** A server certificate for `names` (DNS names and IP addresses) signed by `root`, valid for LEAF_DAYS. */
export async function issueServerCertificate(
  root: { key: string; cert: string },
  names: string[],
): Promise<{ key: string; cert: string }> {
  const x509 = await loadX509()
  const rootCert = new x509.X509Certificate(root.cert)
  const der = Buffer.from(root.key.replace(/-----[^-]+-----|\s/g, ''), 'base64')
  const signingKey = await webcrypto.subtle.importKey('pkcs8', der, ALG, false, ['sign'])
  const keys = await keyPair()
  const now = new Date()
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${names[0] ?? 'localhost'}`,
    issuer: rootCert.subject,
    notBefore: new Date(now.getTime() - 60_000),
    notAfter: new Date(now.getTime() + LEAF_DAYS * DAY),
    signingAlgorithm: ALG,
    publicKey: keys.publicKey,
    signingKey,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      await x509.AuthorityKeyIdentifierExtension.create(rootCert),
      new x509.SubjectAlternativeNameExtension(
        names.map((n) => (ipaddr.isValid(n) ? { type: 'ip' as const, value: n } : { type: 'dns' as const, value: n })),
      ),
    ],
  })
  return { key: await pkcs8Pem(keys.privateKey), cert: `${cert.toString('pem')}\n` }
}

/** Where the local root's certificate is kept: the file to trust (`hostapi cert` prints it). */
export const localRootFile = (config: Config): string => path.join(config.dataDir, 'tls-ca.pem')

/** The local root, generated once into the data directory (its key owner-only); `created` when made now. */
export async function ensureLocalRoot(config: Config): Promise<{ key: string; cert: string; created: boolean }> {
  const certFile = localRootFile(config)
  const keyFile = path.join(config.dataDir, 'tls-ca-key.pem')
  if (fs.existsSync(certFile) && fs.existsSync(keyFile))
    return { cert: fs.readFileSync(certFile, 'utf8'), key: fs.readFileSync(keyFile, 'utf8'), created: false }
  fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 })
  const root = await generateRoot()
  // The key first: a root certificate on disk always has its key beside it.
  writePrivate(keyFile, root.key)
  fs.writeFileSync(certFile, root.cert)
  return { ...root, created: true }
}

const writePrivate = (file: string, text: string) => {
  // The mode applies to a new file only; a key written again stays owner-only too.
  fs.writeFileSync(file, text, { mode: 0o600 })
  fs.chmodSync(file, 0o600)
}

/** The kept server certificate still serves: signed by the root, for `names`, and not near its end. */
function stillGood(root: string, cert: string, namesOk: boolean, now: number): boolean {
  if (!namesOk) return false
  try {
    const leaf = new X509Certificate(cert)
    return leaf.verify(new X509Certificate(root).publicKey) && Date.parse(leaf.validTo) - now > RENEW_DAYS * DAY
  } catch {
    return false
  }
}

/**
 * The server's certificate: the configured files, or one signed by the local root (generated once into the data
 * directory, see ensureLocalRoot) and issued again when HOSTAPI_TLS_NAMES changes, when it nears its end, or when
 * it was not signed by the root (a data directory from before the root: its self-signed certificate is replaced).
 */
export async function loadTls(config: Config): Promise<TlsMaterial> {
  if (config.tls.certFile && config.tls.keyFile) {
    return {
      cert: fs.readFileSync(config.tls.certFile, 'utf8'),
      key: fs.readFileSync(config.tls.keyFile, 'utf8'),
      source: config.tls.certFile,
    }
  }
  const names = ['localhost', '127.0.0.1', '::1', ...config.tls.names]
  const root = await ensureLocalRoot(config)
  const certFile = path.join(config.dataDir, 'tls-cert.pem')
  const keyFile = path.join(config.dataDir, 'tls-key.pem')
  const namesFile = path.join(config.dataDir, 'tls-names.json')
  const wanted = JSON.stringify(names)
  const trust = `signed by the local root ${localRootFile(config)}: trust that file (npx hostapi cert prints its path)`
  if (fs.existsSync(certFile) && fs.existsSync(keyFile)) {
    const cert = fs.readFileSync(certFile, 'utf8')
    const namesOk = fs.existsSync(namesFile) && fs.readFileSync(namesFile, 'utf8') === wanted
    if (stillGood(root.cert, cert, namesOk, Date.now()))
      return { cert, key: fs.readFileSync(keyFile, 'utf8'), source: `${certFile} (${trust})` }
  }
  const issued = await issueServerCertificate(root, names)
  writePrivate(keyFile, issued.key)
  fs.writeFileSync(certFile, issued.cert)
  fs.writeFileSync(namesFile, wanted)
  return { ...issued, source: `${certFile} (generated, ${trust})` }
}
