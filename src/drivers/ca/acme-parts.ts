import http from 'node:http'
import type * as Acme from 'acme-client'
import type { Challenge, IssuedCertificate } from './ca.js'
import { loadX509 } from './x509.js'

// The ACME driver's pieces that need no driver state: problem texts, the chain split, the http-01 self-check.

const HTTP_CHECK_TIMEOUT_MS = 5_000

/** One authorization of an ACME order and the challenge hostapi answers for it. */
export interface AcmeAuthorization {
  url: string
  /** The identifier, without `*.`; `wildcard` tells a wildcard's authorization apart from its base name's. */
  name: string
  wildcard: boolean
  type: 'dns-01' | 'http-01'
  challengeUrl: string
  token: string
  /** What the CA expects: the TXT value (dns-01) or the file's content (http-01). */
  keyAuthorization: string
}

/** The ACME order of a certificate, kept with it (as `Challenge.order`) across requests and restarts. */
export interface AcmeOrder {
  url: string
  /** When hostapi created it (ISO 8601): checks of an order back off with its age. */
  createdAt: string
  finalize: string
  authorizations: AcmeAuthorization[]
  /** The how-manyth order of the certificate (1 when absent): a failed check at the CA is tried again in a new one. */
  attempt?: number
}

export const PROBLEM = 'urn:ietf:params:acme:error:'
/** Problems that will not go away by asking again: the CA refuses the request. */
export const REFUSALS = new Set(
  [
    'rejectedIdentifier',
    'unsupportedIdentifier',
    'caa',
    'badCSR',
    'badPublicKey',
    'unauthorized',
    'incorrectResponse',
    'dns',
    'connection',
    'tls',
    'malformed',
    'orderNotReady',
    'externalAccountRequired',
    'invalidContact',
    'unsupportedContact',
    'compound',
  ].map((t) => PROBLEM + t),
)

/** Orders one certificate may take: a check the CA failed is tried again this often in a new order, then refused. */
export const ACME_ORDER_ATTEMPTS = 3

export function authorizationProblem(state: Acme.Authorization | undefined, authz: AcmeAuthorization): string {
  const failed = state?.challenges?.find((c) => c.type === authz.type && c.error)
  const error = failed?.error as { detail?: string; type?: string } | undefined
  const what = `${authz.wildcard ? '*.' : ''}${authz.name}`
  const detail = error?.detail ?? error?.type ?? 'no detail'
  return `Validation of ${what} failed at the CA (${state?.status ?? 'unknown'}): ${detail}`
}

export function orderProblem(order: Acme.Order): string {
  const error = (order as { error?: { detail?: string; type?: string } }).error
  return `The CA refused the order: ${error?.detail ?? error?.type ?? 'no detail'}`
}

/** The leaf and the rest of the chain, as the CA returned them, with the leaf's serial and validity. */
export async function splitChain(chain: string): Promise<IssuedCertificate> {
  const pems = chain.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []
  const [first, ...rest] = pems
  if (!first) throw new Error('The ACME server returned no certificate')
  const x509 = await loadX509()
  const leaf = new x509.X509Certificate(first)
  return {
    certificate: `${first}\n`,
    intermediate: rest.map((p) => `${p}\n`).join(''),
    serialNumber: leaf.serialNumber.toLowerCase(),
    notBefore: leaf.notBefore,
    notAfter: leaf.notAfter,
  }
}

/** GET `path` from `address`:`port` with `host` as the Host header; the body, or null on any failure. */
export function fetchText(address: string, port: number, host: string, path: string): Promise<string | null> {
  return new Promise((resolve) => {
    const req = http.get({ host: address, port, path, headers: { host }, timeout: HTTP_CHECK_TIMEOUT_MS }, (res) => {
      if (res.statusCode !== 200) {
        res.resume()
        resolve(null)
        return
      }
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        body += chunk
        if (body.length > 4096) req.destroy()
      })
      res.on('end', () => resolve(body))
      res.on('error', () => resolve(null))
    })
    req.on('timeout', () => req.destroy())
    req.on('error', () => resolve(null))
  })
}

/** Whether a problem says the CA no longer knows the account: `forgotten`, `deactivated`, or false. */
export function accountLost(problem: { type: string; detail: string } | null): 'forgotten' | 'deactivated' | false {
  if (problem?.type === `${PROBLEM}accountDoesNotExist`) return 'forgotten'
  if (problem?.type === `${PROBLEM}unauthorized` && /account.*deactivated|deactivated.*account/i.test(problem.detail))
    return 'deactivated'
  return false
}

/** The challenge to show for `order`: one TXT record or file per authorization, as the CA asks for it. */
export function challengeOf(base: Challenge, order: AcmeOrder): Challenge {
  return {
    ...base,
    dnsRecords: order.authorizations
      .filter((a) => a.type === 'dns-01')
      .map((a) => ({ type: 'TXT' as const, name: `_acme-challenge.${a.name}`, value: a.keyAuthorization })),
    httpFiles: order.authorizations
      .filter((a) => a.type === 'http-01')
      .map((a) => ({ url: httpFileUrl(a), content: a.keyAuthorization })),
    order,
  }
}

export const httpFileUrl = (a: AcmeAuthorization) => `http://${a.name}/.well-known/acme-challenge/${a.token}`
