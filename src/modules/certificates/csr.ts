import { ApiError, errors } from '../../errors.js'
import { isCertificateName } from '../../drivers/ca/names.js'
import {
  ECDSA_P256,
  loadX509,
  publicKeyProblem,
  rsaAlgorithm,
  subtle,
  toPem,
  type X509,
} from '../../drivers/ca/x509.js'

/** The subject and key of a CSR to generate. */
export interface CsrInput {
  common_name: string
  organization: string
  email: string
  country: string
  state: string
  locality: string
  unit?: string
  bits?: number
  key_type?: 'rsa' | 'ec'
}

/** A generated request and its private key, both PEM. */
export interface GeneratedCsr {
  csr: string
  private_key: string
}

/** What a CSR asks for, read back and checked. */
export interface ParsedCsr {
  /** PEM, normalised. */
  pem: string
  commonName: string | null
  /** Every name: the common name first (when it is a domain name), then the SANs; lower case, no duplicates. */
  names: string[]
  /** `RSA 2048`, `EC P-256`. */
  key: string
}

/** An e-mail address as a certificate subject carries it: ASCII (IA5String), no spaces or controls. */
const EMAIL = /^[\x21-\x3f\x41-\x7e]+@[\x21-\x3f\x41-\x7e]+\.[\x21-\x3f\x41-\x7e]+$/
const EMAIL_MAX = 254

/** The upper bounds of X.520 (characters) for the free-text subject fields. */
const SUBJECT_MAX = { organization: 64, unit: 64, state: 128, locality: 128 } as const

/**
 * Controls (NUL included), lone surrogates' stand-ins, bidi overrides and noncharacters: text a subject
 * must not carry, because a reader of the certificate would see something else than what is there.
 */
const FORBIDDEN = /[\p{Cc}\u200e\u200f\u202a-\u202e\u2066-\u2069\ufdd0-\ufdef\ufffe\uffff]/u

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/**
 * One free-text subject field (organization, unit, state, locality) as it goes into the request: any
 * Unicode text, trimmed and in NFC, at most `max` characters; throws `Invalid <field>: …` otherwise.
 */
export function subjectText(field: keyof typeof SUBJECT_MAX, value: string, required: boolean): string {
  if (LONE_SURROGATE.test(value)) throw errors.csrFieldNotUnicode(field)
  const text = value.normalize('NFC').trim()
  if (FORBIDDEN.test(text)) throw errors.csrFieldForbidden(field)
  if (required && text === '') throw errors.csrFieldEmpty(field)
  if ([...text].length > SUBJECT_MAX[field]) throw errors.csrFieldTooLong(field, SUBJECT_MAX[field])
  return text
}

/** A name or text quoted for an error message: JSON-escaped (controls visible), at most 100 characters. */
const quoted = (text: string) => JSON.stringify([...text].length > 100 ? `${[...text].slice(0, 100).join('')}…` : text)

/**
 * Generates a private key (RSA 2048/3072/4096 or ECDSA P-256) and a PKCS#10 request signed with it, for
 * `common_name` (also its subjectAltName) and the organisation fields. The key is not kept anywhere.
 */
export async function generateCsr(input: CsrInput): Promise<GeneratedCsr> {
  const commonName = input.common_name.trim().toLowerCase()
  if (!isCertificateName(commonName)) throw errors.invalidCommonName()
  const country = input.country.trim().toUpperCase()
  if (!/^[A-Z]{2}$/.test(country)) throw errors.invalidCountry()
  const email = input.email.trim()
  if (email.length > EMAIL_MAX || !EMAIL.test(email)) throw errors.invalidCsrEmail()
  const organization = subjectText('organization', input.organization, true)
  const unit = input.unit === undefined ? '' : subjectText('unit', input.unit, false)
  const locality = subjectText('locality', input.locality, true)
  const state = subjectText('state', input.state, true)
  const keyType = input.key_type ?? 'rsa'
  if (keyType === 'ec' && input.bits !== undefined) throw errors.bitsOnlyForRsa()

  const x509 = await loadX509()
  const algorithm = keyType === 'ec' ? ECDSA_P256 : rsaAlgorithm(input.bits ?? 2048)
  const keys = (await subtle.generateKey(algorithm, true, ['sign', 'verify'])) as CryptoKeyPair
  // Every value typed explicitly: given as plain strings, the library reads `#…` as DER in hex and strips
  // quotes and backslashes.
  const text = (value: string) =>
    x509.Name.isPrintableString(value) ? { printableString: value } : { utf8String: value }
  const name: X509.JsonNameParams = [{ CN: [text(commonName)] }, { O: [text(organization)] }]
  if (unit) name.push({ OU: [text(unit)] })
  name.push(
    { L: [text(locality)] },
    { ST: [text(state)] },
    { C: [{ printableString: country }] },
    { E: [{ ia5String: email }] },
  )
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: new x509.Name(name),
    keys,
    signingAlgorithm: algorithm,
    extensions: [new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: commonName }])],
  })
  const privateKey = toPem(await subtle.exportKey('pkcs8', keys.privateKey), 'PRIVATE KEY')
  const generated = { csr: `${csr.toString('pem')}\n`, private_key: privateKey }
  // Read it back: what we hand out must pass our own request check.
  await parseCsr(generated.csr)
  return generated
}

const SAN_OID = '2.5.29.17'

/** Reads a PEM CSR, checks its signature, key and names; throws `Invalid CSR: …` naming the problem. */
export async function parseCsr(text: string): Promise<ParsedCsr> {
  try {
    return await readCsr(text)
  } catch (err) {
    // The library decodes names and extensions on first use; a malformed one throws its own errors there.
    if (err instanceof ApiError) throw err
    throw errors.csrUnreadable()
  }
}

async function readCsr(text: string): Promise<ParsedCsr> {
  const pem = text
    .trim()
    .replace(/\r\n/g, '\n')
    .replace(/-----(BEGIN|END) NEW CERTIFICATE REQUEST-----/g, '-----$1 CERTIFICATE REQUEST-----')
  if (!/^-----BEGIN CERTIFICATE REQUEST-----\n[\s\S]+\n-----END CERTIFICATE REQUEST-----$/.test(pem)) {
    throw errors.csrNotPem()
  }
  const x509 = await loadX509()
  let csr: X509.Pkcs10CertificateRequest
  try {
    csr = new x509.Pkcs10CertificateRequest(pem)
    void csr.publicKey.algorithm
  } catch {
    throw errors.csrUnreadable()
  }
  const keyProblem = publicKeyProblem(csr.publicKey.algorithm)
  if (keyProblem) throw errors.invalidCsr(keyProblem)
  if (!(await csr.verify().catch(() => false))) throw errors.csrSignature()

  const cn = csr.subjectName.getField('CN')[0]?.trim().toLowerCase() ?? null
  const names: string[] = []
  if (cn !== null) {
    if (!isCertificateName(cn)) throw errors.csrCommonNameNotDomain(quoted(cn))
    names.push(cn)
  }
  const sanExt = csr.extensions.find((e) => e.type === SAN_OID)
  if (sanExt) {
    for (const general of new x509.SubjectAlternativeNameExtension(sanExt.rawData).names.toJSON()) {
      if (general.type !== 'dns') throw errors.csrNonDnsName(general.type, String(general.value))
      const n = general.value.trim().toLowerCase()
      if (!isCertificateName(n)) throw errors.csrNameNotDomain(quoted(general.value))
      if (!names.includes(n)) names.push(n)
    }
  }
  if (names.length === 0) throw errors.csrNoName()
  const alg = csr.publicKey.algorithm as Algorithm & { modulusLength?: number; namedCurve?: string }
  return {
    pem: `${pem}\n`,
    commonName: cn,
    names,
    key: alg.name.startsWith('RSA') ? `RSA ${alg.modulusLength}` : `EC ${alg.namedCurve}`,
  }
}
