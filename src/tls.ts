import fs from 'node:fs'
import path from 'node:path'
import { webcrypto } from 'node:crypto'
import ipaddr from 'ipaddr.js'
import type { Config } from './config/config.js'
import { loadX509 } from './drivers/ca/x509.js'

export interface TlsMaterial {
  key: string
  cert: string
  /** Where the certificate came from, for the start-up message. */
  source: string
}

const toPem = (der: ArrayBuffer, label: string) =>
  `-----BEGIN ${label}-----\n${Buffer.from(der)
    .toString('base64')
    .match(/.{1,64}/g)!
    .join('\n')}\n-----END ${label}-----\n`

/** A self-signed ECDSA P-256 certificate for `names` (DNS names and IP addresses), valid for ten years. */
export async function generateSelfSigned(names: string[]): Promise<{ key: string; cert: string }> {
  const x509 = await loadX509()
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' }
  const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as CryptoKeyPair
  const now = new Date()
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: Buffer.from(webcrypto.getRandomValues(new Uint8Array(16)))
      .toString('hex')
      .replace(/^[89a-f]/, '1'),
    name: 'CN=hostapi self-signed',
    notBefore: new Date(now.getTime() - 60_000),
    notAfter: new Date(now.getTime() + 3650 * 86_400_000),
    signingAlgorithm: alg,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(
        names.map((n) => (ipaddr.isValid(n) ? { type: 'ip' as const, value: n } : { type: 'dns' as const, value: n })),
      ),
    ],
  })
  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)
  return { key: toPem(pkcs8, 'PRIVATE KEY'), cert: `${cert.toString('pem')}\n` }
}

/**
 * The server's certificate: the configured files, or a self-signed one generated once into the data
 * directory (and again when HOSTAPI_TLS_NAMES changes).
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
  const certFile = path.join(config.dataDir, 'tls-cert.pem')
  const keyFile = path.join(config.dataDir, 'tls-key.pem')
  const namesFile = path.join(config.dataDir, 'tls-names.json')
  const wanted = JSON.stringify(names)
  if (
    fs.existsSync(certFile) &&
    fs.existsSync(keyFile) &&
    fs.existsSync(namesFile) &&
    fs.readFileSync(namesFile, 'utf8') === wanted
  ) {
    return { cert: fs.readFileSync(certFile, 'utf8'), key: fs.readFileSync(keyFile, 'utf8'), source: certFile }
  }
  fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 })
  const generated = await generateSelfSigned(names)
  // The mode applies to a new file only; a key written again (new names) stays owner-only too.
  fs.writeFileSync(keyFile, generated.key, { mode: 0o600 })
  fs.chmodSync(keyFile, 0o600)
  fs.writeFileSync(certFile, generated.cert)
  fs.writeFileSync(namesFile, wanted)
  return { ...generated, source: `${certFile} (self-signed, generated)` }
}
