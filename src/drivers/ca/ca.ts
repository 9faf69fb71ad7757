/** How a requester proves control over the names of a certificate. */
export type ValidationMethod = 'dns' | 'http' | 'https' | 'email'

/** A TXT record the requester publishes for DNS validation. */
export interface DnsChallengeRecord {
  type: 'TXT'
  /** Fully qualified owner name, without the trailing dot. */
  name: string
  value: string
}

/** A file the requester serves for HTTP(S) validation. */
export interface HttpChallengeFile {
  url: string
  content: string
}

/** What the requester must do to prove control over the names, as a CA asks it. */
export interface Challenge {
  method: ValidationMethod
  /** `dns`: the TXT records to publish (one per distinct base name). */
  dnsRecords: DnsChallengeRecord[]
  /** `http`/`https`: the files to serve (one per name). */
  httpFiles: HttpChallengeFile[]
  /** `email`: the address the approval mail goes to. */
  approverEmail: string | null
  /**
   * The CA's own state of this validation, kept with the certificate between requests and restarts (an ACME
   * order: its URL, authorizations and challenge URLs); absent for a CA that keeps none.
   */
  order?: unknown
}

/** What a certificate request asks of the CA. */
export interface ChallengeRequest {
  /** The account that asks. */
  accountId: number
  /** The certificate's names: the common name first, then the other SANs; wildcards as `*.example.com`. */
  names: string[]
  method: ValidationMethod
  approverEmail: string | null
  /** The customer's PKCS#10 request, PEM (checked by the caller). */
  csr: string
}

/** A check of a challenge, by the job that issues the certificate. */
export interface ValidationRequest {
  /** The account that asked; a CA that looks at hosted zones looks only at this account's. */
  accountId: number
  names: string[]
  challenge: Challenge
}

/**
 * Whether the challenge is met. `challenge`, when given, replaces the stored one (a CA that creates its
 * challenge remotely fills it in here: the records to publish appear then); `retryInMs` asks for the next
 * check sooner than the usual back-off.
 */
export type ValidationResult =
  | { valid: true; challenge?: Challenge }
  | { valid: false; reason: string; challenge?: Challenge; retryInMs?: number }

export interface IssueRequest {
  /** The PKCS#10 request, PEM; its signature has been checked by the caller. */
  csr: string
  /** The names to certify: the first is the subject's common name, all of them are SANs. */
  names: string[]
  /** The latest expiry the customer paid for; the CA may end the certificate earlier. */
  notAfter: Date
  /** The challenge that was met, for a CA that issues within its own order (ACME); absent for demo data. */
  challenge?: Challenge
}

export interface IssuedCertificate {
  /** The leaf certificate, PEM. */
  certificate: string
  /** The issuing (intermediate) certificates, PEM, leaf's issuer first. */
  intermediate: string
  /** Hex serial number of the leaf. */
  serialNumber: string
  notBefore: Date
  notAfter: Date
}

/** Raised by a driver for a request it refuses (a name or key it will not certify). */
export class CertificateRejected extends Error {}

/**
 * A certificate authority that validates control over names and signs certificates for them.
 * Selected by configuration; every implementation passes `contract.test.ts`.
 */
export interface CertificateAuthority {
  /** The driver's name, stored with what it issued. */
  readonly name: string
  /** The validation methods it offers; `createChallenge` refuses the others. */
  readonly validationMethods: readonly ValidationMethod[]
  /**
   * Whether `issue` signs without a met challenge (demo data, which owns nothing a CA could validate); false
   * for a CA that signs only within its own validated order (ACME).
   */
  readonly signsWithoutChallenge: boolean
  /**
   * The challenge that proves control over `names` with `method`; a new random one on every call. Answers at
   * once without a remote server: a CA that creates its challenge remotely answers it empty, with `order`
   * unset, and fills it in at the first `validate`.
   */
  createChallenge(req: ChallengeRequest): Promise<Challenge>
  /**
   * Whether the challenge has been met now; resolves `{valid: false, reason}` while it is not (never throws for
   * that). Throws CertificateRejected when the CA refused for good, any other error when the CA cannot be
   * reached (the job retries).
   */
  validate(req: ValidationRequest): Promise<ValidationResult>
  /** Signs a certificate for the CSR's public key and `names`; throws CertificateRejected for what it will not sign. */
  issue(req: IssueRequest): Promise<IssuedCertificate>
  /**
   * The root certificate (PEM) that verifies every certificate this CA issues, or null for a CA whose roots
   * are in the public trust stores and not held by hostapi (ACME: the chain it returns ends below the root).
   */
  rootCertificate(): Promise<string | null>
}
