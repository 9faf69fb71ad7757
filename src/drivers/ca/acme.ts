import fs from 'node:fs'
import http from 'node:http'
import https from 'node:https'
import tls from 'node:tls'
import { AsyncLocalStorage } from 'node:async_hooks'
import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import type * as Acme from 'acme-client'
import type { Clock } from '../../clock.js'
import { iso } from '../../clock.js'
import type { AcmeConfig } from '../../config/ca.js'
import type { DB } from '../../db/tables.js'
import { isUniqueViolation } from '../../db/errors.js'
import { lazyRequire } from '../../lazy-require.js'
import { SecretBox, type SealedColumn } from '../../lib/secret-box.js'
import * as repo from './ca.repository.js'
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
import type { TxtLookup } from './builtin.js'
import { loadX509, readCsr } from './x509.js'

/** Reads the addresses (A and AAAA) of `fqdn`, as the account's own zone (or public DNS) has them. */
export type AddressLookup = (accountId: number, fqdn: string) => Promise<string[]>

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
}

const requireAcme = lazyRequire<typeof Acme>('acme-client')

/** What one call of the driver learnt from the ACME server: the last problem document, for the error it raises. */
interface CallState {
  agent: http.Agent | undefined
  problem: { status: number; type: string; detail: string } | null
  /** How many nonces the server rejected (acme-client sends the request again with the fresh nonce). */
  badNonces: number
}

const calls = new AsyncLocalStorage<CallState>()
let interceptorsInstalled = false

// acme-client's HTTP client (axios) is shared by the process: these hooks act only within a call of this driver.
// They give it this driver's trusted CA, a timeout, and no retries of its own (the job queue retries, with
// back-off and a record of the attempt), and keep the problem document the error message would lose.
function installInterceptors(acme: typeof Acme): void {
  if (interceptorsInstalled) return
  interceptorsInstalled = true
  acme.axios.interceptors.request.use((config) => {
    const state = calls.getStore()
    if (!state) return config
    if (state.agent) config.httpsAgent = state.agent
    config.timeout ??= REQUEST_TIMEOUT_MS
    Object.assign(config, { retryAttempt: Number.MAX_SAFE_INTEGER })
    return config
  })
  acme.axios.interceptors.response.use((response) => {
    const state = calls.getStore()
    const data = response.data as { type?: unknown; detail?: unknown } | undefined
    if (state && response.status >= 400 && data && typeof data.type === 'string') {
      state.problem = { status: response.status, type: data.type, detail: String(data.detail ?? '') }
      if (data.type === `${PROBLEM}badNonce`) state.badNonces++
    } else if (state && response.status < 400) {
      // A problem that acme-client got past (a badNonce it retried with the fresh nonce) is not the call's.
      state.problem = null
    }
    return response
  })
}

const REQUEST_TIMEOUT_MS = 20_000
const PROBLEM = 'urn:ietf:params:acme:error:'
/** Problems that will not go away by asking again: the CA refuses the request. */
const REFUSALS = new Set(
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
// How long one check waits for the CA to finish validating or signing before the job checks again later.
const POLLS = 8
const POLL_MS = 750
const HTTP_CHECK_TIMEOUT_MS = 5_000
const MIN_RECHECK_MS = 2_000
const MAX_RECHECK_MS = 60 * 60_000

/**
 * A certificate authority reached over ACME (RFC 8555): Let's Encrypt, ZeroSSL, a private ACME server.
 * One account per installation and server, registered on first use, its key sealed with `secrets`. A request
 * creates nothing at the CA; the certificate's job creates the order, keeps it with the certificate (the
 * challenge's `order`), waits until the customer's records or files can be seen, has the CA validate them, then
 * finalises the order with the customer's CSR and stores the chain as the CA returns it. Offers `dns` (dns-01)
 * and `http`/`https` (http-01, which a CA fetches over http on port 80); no `email`.
 */
export class AcmeCa implements CertificateAuthority {
  readonly name = 'acme'
  readonly validationMethods = ['dns', 'http', 'https'] as const
  private client: Promise<Acme.Client> | null = null
  private readonly agent: http.Agent | undefined

  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock,
    private readonly lookupTxt: TxtLookup,
    private readonly lookupAddresses: AddressLookup,
    private readonly secrets: SecretBox,
    private readonly opts: AcmeConfig,
    private readonly log: Logger,
  ) {
    if (opts.caBundle) {
      let bundle: string
      try {
        bundle = fs.readFileSync(opts.caBundle, 'utf8')
      } catch (err) {
        throw new Error(`HOSTAPI_ACME_CA_BUNDLE: cannot read ${opts.caBundle}: ${(err as Error).message}`)
      }
      this.agent = new https.Agent({ keepAlive: true, ca: [...tls.rootCertificates, bundle] })
    }
  }

  async createChallenge(req: ChallengeRequest): Promise<Challenge> {
    if (req.method === 'email')
      throw new CertificateRejected('ACME certificates cannot be validated by email: use dns, http or https')
    if (req.method !== 'dns' && req.names.some((n) => n.startsWith('*.')))
      throw new CertificateRejected('Wildcard names can only be validated by dns with this CA')
    return { method: req.method, dnsRecords: [], httpFiles: [], approverEmail: null }
  }

  validate(req: ValidationRequest): Promise<ValidationResult> {
    return this.call(async (client) => {
      const order = req.challenge.order as AcmeOrder | undefined
      if (!order) {
        const created = await this.createOrder(client, req.names, req.challenge.method)
        const what = req.challenge.method === 'dns' ? 'TXT records' : 'validation files'
        return {
          valid: false,
          reason: `Waiting for the ${what} to be published`,
          challenge: challengeOf(req.challenge, created),
          retryInMs: 1000,
        }
      }
      const toAnswer: string[] = []
      const states = await client.getAuthorizations({ authorizations: order.authorizations.map((a) => a.url) } as never)
      for (const [i, authz] of order.authorizations.entries()) {
        const state = states[i]
        if (state.status === 'valid') continue
        if (state.status !== 'pending') throw new CertificateRejected(authorizationProblem(state, authz))
        const unmet = await this.unmet(req.accountId, authz)
        if (unmet) return { valid: false, reason: unmet, retryInMs: this.recheckIn(order) }
        const challenge = state.challenges.find((c) => c.url === authz.challengeUrl)
        if (challenge?.status === 'pending') toAnswer.push(authz.challengeUrl)
      }
      if (states.every((s) => s.status === 'valid')) return { valid: true }
      // Every record or file can be seen: the CA may check them now (a challenge it is checking is left alone).
      for (const url of toAnswer) await client.completeChallenge({ url } as never)
      for (let i = 0; i < POLLS; i++) {
        await sleep(POLL_MS)
        const states = await client.getAuthorizations({
          authorizations: order.authorizations.map((a) => a.url),
        } as never)
        const bad = states.find((s) => s.status !== 'valid' && s.status !== 'pending')
        if (bad) {
          const authz = order.authorizations.find((a) => a.url === bad.url) ?? order.authorizations[0]
          throw new CertificateRejected(authorizationProblem(bad, authz))
        }
        if (states.every((s) => s.status === 'valid')) return { valid: true }
      }
      return { valid: false, reason: 'The CA is checking the validation', retryInMs: 2000 }
    })
  }

  issue(req: IssueRequest): Promise<IssuedCertificate> {
    const order = req.challenge?.order as AcmeOrder | undefined
    if (!order) return Promise.reject(new CertificateRejected('An ACME CA signs only within a validated order'))
    return this.call(async (client) => {
      // The same CSR policy as the built-in CA's, before the order is finalised with it.
      await readCsr(req.csr)
      let state = await client.getOrder({ url: order.url } as Acme.Order)
      if (state.status === 'ready') state = await client.finalizeOrder(state, req.csr)
      for (let i = 0; i < POLLS && (state.status === 'processing' || state.status === 'ready'); i++) {
        await sleep(POLL_MS)
        state = await client.getOrder(state)
      }
      if (state.status === 'invalid') throw new CertificateRejected(orderProblem(state))
      if (state.status !== 'valid') throw new Error(`The ACME order is ${state.status} still; checking again later`)
      const chain = await client.getCertificate(state)
      return splitChain(chain)
    })
  }

  /** Null: the chain an ACME CA returns ends below its root, which browsers hold in their trust stores. */
  async rootCertificate(): Promise<string | null> {
    return null
  }

  /** The next check of a record or file not seen yet: soon for a new order, then less often (up to an hour). */
  private recheckIn(order: AcmeOrder): number {
    const age = this.clock.now().getTime() - new Date(order.createdAt).getTime()
    return Math.min(MAX_RECHECK_MS, Math.max(MIN_RECHECK_MS, Math.floor(age / 4)))
  }

  /** Runs `fn` with the account's client; a problem the CA answers becomes the error's message. */
  private async call<T>(fn: (client: Acme.Client) => Promise<T>): Promise<T> {
    const state: CallState = { agent: this.agent, problem: null, badNonces: 0 }
    return calls.run(state, async () => {
      try {
        return await fn(await this.account())
      } catch (err) {
        if (err instanceof CertificateRejected) throw err
        const problem = state.problem
        if (problem && REFUSALS.has(problem.type)) throw new CertificateRejected(problem.detail || problem.type)
        const origin = new URL(this.opts.directoryUrl).origin
        if (problem) {
          const type = problem.type.replace(PROBLEM, '')
          throw new Error(`The ACME server ${origin} answered ${problem.status} ${type}: ${problem.detail}`)
        }
        const message = err instanceof TypeError ? 'no answer' : (err as Error).message
        throw new Error(`The ACME server ${origin} cannot be reached (${message})`)
      } finally {
        if (state.badNonces) this.log.debug({ badNonces: state.badNonces }, 'the ACME server rejected nonces; resent')
      }
    })
  }

  /** The client of the installation's account, registered at the server on first use. */
  private account(): Promise<Acme.Client> {
    this.client ??= this.openAccount().catch((err) => {
      this.client = null
      throw err
    })
    return this.client
  }

  private async openAccount(): Promise<Acme.Client> {
    const acme = requireAcme()
    installInterceptors(acme)
    const url = this.opts.directoryUrl
    let row = await repo.findAcmeAccount(this.db, url)
    if (!row) {
      const key = (await acme.crypto.createPrivateEcdsaKey('P-256')).toString()
      try {
        await repo.insertAcmeAccount(this.db, {
          directory_url: url,
          account_key: this.secrets.seal(key, keyContext(url)),
          account_url: null,
          email: this.opts.email,
          created_at: iso(this.clock.now()),
        })
      } catch (err) {
        if (!isUniqueViolation(err)) throw err
      }
      row = await repo.findAcmeAccount(this.db, url)
      if (!row) throw new Error('The ACME account key could not be stored')
    }
    const stored = row.account_key
    const accountKey = SecretBox.isSealed(stored) ? this.secrets.open(stored, keyContext(url)) : stored
    const client = new acme.Client({
      directoryUrl: url,
      accountKey,
      accountUrl: row.account_url ?? undefined,
      externalAccountBinding: this.opts.eab ?? undefined,
    })
    if (!row.account_url) {
      try {
        await client.createAccount({
          termsOfServiceAgreed: true,
          ...(this.opts.email ? { contact: [`mailto:${this.opts.email}`] } : {}),
        })
      } catch (err) {
        // Another instance registered the same key a moment ago: the CA then answers with that account, which
        // acme-client follows with an update some CAs refuse; asking for the existing account needs no update.
        await client.createAccount({ onlyReturnExisting: true }).catch(() => Promise.reject(err))
      }
      const accountUrl = client.getAccountUrl()
      await repo.setAcmeAccountUrl(this.db, row.id, accountUrl)
      this.log.info({ directory: url, account: accountUrl }, 'registered the ACME account')
    }
    return client
  }

  /** A new order for `names`, with the challenge of each authorization that `method` answers. */
  private async createOrder(client: Acme.Client, names: string[], method: Challenge['method']): Promise<AcmeOrder> {
    const order = await client.createOrder({ identifiers: names.map((value) => ({ type: 'dns', value })) })
    const type = method === 'dns' ? 'dns-01' : 'http-01'
    const authorizations: AcmeAuthorization[] = []
    for (const authz of await client.getAuthorizations(order)) {
      if (authz.status === 'valid') continue
      const challenge = authz.challenges.find((c) => c.type === type)
      if (!challenge) {
        throw new CertificateRejected(`The CA offers no ${type} challenge for ${authz.identifier.value}`)
      }
      authorizations.push({
        url: authz.url,
        name: authz.identifier.value,
        wildcard: authz.wildcard === true,
        type,
        challengeUrl: challenge.url,
        token: challenge.token,
        keyAuthorization: await client.getChallengeKeyAuthorization(challenge),
      })
    }
    return { url: order.url, createdAt: iso(this.clock.now()), finalize: order.finalize, authorizations }
  }

  /** Why the CA's check of `authz` would fail now (the record or file cannot be seen yet), or null. */
  private async unmet(accountId: number, authz: AcmeAuthorization): Promise<string | null> {
    if (authz.type === 'dns-01') {
      const name = `_acme-challenge.${authz.name}`
      const values = await this.lookupTxt(accountId, name)
      return values.includes(authz.keyAuthorization) ? null : `The TXT record ${name} does not hold the value yet`
    }
    const url = httpFileUrl(authz)
    const addresses = await this.lookupAddresses(accountId, authz.name)
    for (const address of addresses) {
      const body = await fetchText(address, this.opts.httpPort, authz.name, new URL(url).pathname)
      if (body?.trim() === authz.keyAuthorization) return null
    }
    return `The file ${url} does not hold the content yet`
  }
}

/** The challenge to show for `order`: one TXT record or file per authorization, as the CA asks for it. */
function challengeOf(base: Challenge, order: AcmeOrder): Challenge {
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

const httpFileUrl = (a: AcmeAuthorization) => `http://${a.name}/.well-known/acme-challenge/${a.token}`

/** What sealed ACME account keys are bound to: a key copied to another server's row does not open there. */
const keyContext = (directoryUrl: string) => `acme_accounts.${directoryUrl}.account_key`

/** The ACME accounts' sealed private keys (one per directory the installation has used). */
export const ACME_SEALED_COLUMNS: SealedColumn[] = [
  {
    table: 'acme_accounts',
    column: 'account_key',
    reads: ['directory_url'],
    context: (row) => keyContext(String(row.directory_url)),
  },
]

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

function authorizationProblem(state: Acme.Authorization | undefined, authz: AcmeAuthorization): string {
  const failed = state?.challenges?.find((c) => c.type === authz.type && c.error)
  const error = failed?.error as { detail?: string; type?: string } | undefined
  const what = `${authz.wildcard ? '*.' : ''}${authz.name}`
  const detail = error?.detail ?? error?.type ?? 'no detail'
  return `Validation of ${what} failed at the CA (${state?.status ?? 'unknown'}): ${detail}`
}

function orderProblem(order: Acme.Order): string {
  const error = (order as { error?: { detail?: string; type?: string } }).error
  return `The CA refused the order: ${error?.detail ?? error?.type ?? 'no detail'}`
}

/** The leaf and the rest of the chain, as the CA returned them, with the leaf's serial and validity. */
async function splitChain(chain: string): Promise<IssuedCertificate> {
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
function fetchText(address: string, port: number, host: string, path: string): Promise<string | null> {
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
