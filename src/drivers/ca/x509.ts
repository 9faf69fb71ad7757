import { webcrypto } from 'node:crypto'
import type * as X509 from '@peculiar/x509'
import { lazyRequire } from '../../lazy-require.js'
import { present } from '../../lib/invariant.js'
import { CertificateRejected } from './ca.js'

export type { X509 }

const requireX509 = lazyRequire<typeof X509>('@peculiar/x509')
let x509: typeof X509 | null = null

/**
 * @peculiar/x509, loaded on first use (it is large, and only certificate work needs it). It needs
 * reflect-metadata loaded first and a WebCrypto provider; every user of it loads it through here.
 */
export async function loadX509(): Promise<typeof X509> {
  if (!x509) {
    lazyRequire('reflect-metadata')()
    x509 = requireX509()
    x509.cryptoProvider.set(webcrypto as unknown as Crypto)
  }
  return x509
}

/** Node's WebCrypto. */
export const subtle = webcrypto.subtle

/** DER bytes as PEM text with `label` (`PRIVATE KEY`, `CERTIFICATE`, …), ending in a newline. */
export const toPem = (der: ArrayBuffer, label: string): string =>
  `-----BEGIN ${label}-----\n${present(
    Buffer.from(der)
      .toString('base64')
      .match(/.{1,64}/g),
    'the DER bytes',
  ).join('\n')}\n-----END ${label}-----\n`

/** The DER bytes of the first PEM block labelled `label`, or null. */
export function fromPem(pem: string, label: string): ArrayBuffer | null {
  const m = new RegExp(`-----BEGIN ${label}-----([A-Za-z0-9+/=\\s]+)-----END ${label}-----`).exec(pem)
  if (!m) return null
  const buf = Buffer.from(m[1].replace(/\s+/g, ''), 'base64')
  return buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer
}

/** ECDSA P-256 with SHA-256: the CA's own keys and signatures. */
export const ECDSA_P256 = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const

/** RSASSA-PKCS1-v1_5 with SHA-256 and a modulus of `bits`. */
export const rsaAlgorithm = (bits: number) =>
  ({
    name: 'RSASSA-PKCS1-v1_5',
    modulusLength: bits,
    publicExponent: new Uint8Array([1, 0, 1]),
    hash: 'SHA-256',
  }) as const

/** A random positive serial number of 16 bytes, hex. */
export function randomSerial(): string {
  const bytes = webcrypto.getRandomValues(new Uint8Array(16))
  bytes[0] &= 0x7f
  if (bytes[0] === 0) bytes[0] = 1
  return Buffer.from(bytes).toString('hex')
}

/** Why a certificate key is not acceptable, or null: RSA of at least 2048 bits, or ECDSA P-256/P-384. */
export function publicKeyProblem(alg: Algorithm & { modulusLength?: number; namedCurve?: string }): string | null {
  if (alg.name.startsWith('RSA'))
    return (alg.modulusLength ?? 0) >= 2048 ? null : 'RSA keys must have at least 2048 bits'
  if (alg.name === 'ECDSA' || alg.name === 'ECDH') {
    return alg.namedCurve === 'P-256' || alg.namedCurve === 'P-384' ? null : 'EC keys must use the curve P-256 or P-384'
  }
  return 'the key must be RSA or EC'
}

/** The CSR a CA signs: readable, its signature verified, its key acceptable; CertificateRejected otherwise. */
export async function readCsr(pem: string): Promise<X509.Pkcs10CertificateRequest> {
  const x509 = await loadX509()
  let csr: X509.Pkcs10CertificateRequest
  try {
    csr = new x509.Pkcs10CertificateRequest(pem)
  } catch {
    throw new CertificateRejected('The CSR cannot be read')
  }
  if (!(await csr.verify().catch(() => false))) throw new CertificateRejected('The CSR signature does not verify')
  const keyProblem = publicKeyProblem(csr.publicKey.algorithm)
  if (keyProblem) throw new CertificateRejected(`Unacceptable key: ${keyProblem}`)
  return csr
}
