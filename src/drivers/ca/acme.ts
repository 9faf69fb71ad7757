import fs from 'node:fs'
import type http from 'node:http'
import https from 'node:https'
import tls from 'node:tls'
import type { Logger } from 'pino'
import type * as Acme from 'acme-client'
import type { Clock } from '../../clock.js'
import { iso } from '../../clock.js'
import type { AcmeConfig } from '../../config/ca.js'
import { isUniqueViolation } from '../../db/errors.js'
import { lazyRequire } from '../../lazy-require.js'
import { ScopedStorage } from '../../lib/scoped-storage.js'
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
import type { TxtLookup } from './builtin.js'
import { readCsr } from './x509.js'
import {
  ACME_ORDER_ATTEMPTS,
  type AcmeAuthorization,
  type AcmeOrder,
  PROBLEM,
  REFUSALS,
  accountLost,
  authorizationProblem,
  challengeOf,
  fetchText,
  httpFileUrl,
  orderProblem,
  splitChain,
} from './acme-parts.js'

/** Reads the addresses (A and AAAA) of `fqdn`, as the account's own zone (or public DNS) has them. */
export type AddressLookup = (accountId: number, fqdn: string) => Promise<string[]>

export { ACME_ORDER_ATTEMPTS, type AcmeAuthorization, type AcmeOrder } from './acme-parts.js'

const requireAcme = lazyRequire<typeof Acme>('acme-client')

/** What one call of the driver learnt from the ACME server: the last problem document, for the error it raises. */
interface CallState {
  agent: http.Agent | undefined
  problem: { status: number; type: string; detail: string } | null
  /** The HTTP status of the server's last answer (a 404 may come without a problem document). */
  lastStatus: number | null
  /** How many nonces the server rejected (acme-client sends the request again with the fresh nonce). */
  badNonces: number
}

const calls = new ScopedStorage<CallState>()
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
    if (state) state.lastStatus = response.status
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
const ORDER_FORGOTTEN = 'The CA no longer knows the order'
// How long one check waits for the CA to finish validating or signing before the job checks again later.
const POLLS = 8
const POLL_MS = 750
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
  readonly signsWithoutChallenge = false
  private client: Promise<Acme.Client> | null = null
  private readonly agent: http.Agent | undefined

  constructor(
    private readonly db: CaDb,
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
      if (!order) return this.newOrder(client, req, 1, null)
      const toAnswer: string[] = []
      const states = await this.authorizationsOf(client, order)
      // A CA that forgot the order (restarted, or expired it) did not fail a check: a new order, not another attempt.
      if (!states) return this.newOrder(client, req, order.attempt ?? 1, ORDER_FORGOTTEN)
      for (const [i, authz] of order.authorizations.entries()) {
        const state = states[i]
        if (state.status === 'valid') continue
        if (state.status !== 'pending')
          return this.retryOrRefuse(client, req, order, authorizationProblem(state, authz))
        const unmet = await this.unmet(req.accountId, authz)
        if (unmet) return { valid: false, reason: unmet, retryInMs: this.recheckIn(order) }
        const challenge = state.challenges.find((c) => c.url === authz.challengeUrl)
        if (challenge?.status === 'pending') toAnswer.push(authz.challengeUrl)
      }
      if (states.every((s) => s.status === 'valid')) return this.orderReady(client, req, order)
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
          return this.retryOrRefuse(client, req, order, authorizationProblem(bad, authz))
        }
        if (states.every((s) => s.status === 'valid')) return this.orderReady(client, req, order)
      }
      return { valid: false, reason: 'The CA is checking the validation', retryInMs: 2000 }
    })
  }

  /** The order's authorizations as the CA has them now, or null when the CA does not know the order (any more). */
  private authorizationsOf(client: Acme.Client, order: AcmeOrder): Promise<Acme.Authorization[] | null> {
    return unlessForgotten(
      client.getAuthorizations({ authorizations: order.authorizations.map((a) => a.url) } as never),
    )
  }

  /**
   * Every authorization is valid (an order of only reused ones has none to check): valid when the CA still has the
   * order, to be signed in it; else a new order.
   */
  private async orderReady(client: Acme.Client, req: ValidationRequest, order: AcmeOrder): Promise<ValidationResult> {
    const state = await unlessForgotten(client.getOrder({ url: order.url } as Acme.Order))
    if (!state) return this.newOrder(client, req, order.attempt ?? 1, ORDER_FORGOTTEN)
    if (state.status === 'invalid') return this.retryOrRefuse(client, req, order, orderProblem(state))
    return { valid: true }
  }

  /** A new order for the certificate (the `attempt`-th), its challenge to publish; `why` says why one is needed. */
  private async newOrder(
    client: Acme.Client,
    req: ValidationRequest,
    attempt: number,
    why: string | null,
  ): Promise<ValidationResult> {
    const created = { ...(await this.createOrder(client, req.names, req.challenge.method)), attempt }
    const what = req.challenge.method === 'dns' ? 'TXT records' : 'validation files'
    return {
      valid: false,
      reason: why ? `${why}; trying again with a new order` : `Waiting for the ${what} to be published`,
      challenge: challengeOf(req.challenge, created),
      retryInMs: 1000,
    }
  }

  /**
   * The CA's check of the order failed (or the order is gone): tried again in a new order, up to ACME_ORDER_ATTEMPTS
   * orders; then the certificate is refused with the CA's reason.
   */
  private retryOrRefuse(
    client: Acme.Client,
    req: ValidationRequest,
    order: AcmeOrder,
    reason: string,
  ): Promise<ValidationResult> {
    const attempt = order.attempt ?? 1
    if (attempt >= ACME_ORDER_ATTEMPTS) throw new CertificateRejected(reason)
    this.log.info({ names: req.names, attempt, reason }, 'ACME validation failed; trying a new order')
    return this.newOrder(client, req, attempt + 1, reason)
  }

  issue(req: IssueRequest): Promise<IssuedCertificate> {
    const order = req.challenge?.order as AcmeOrder | undefined
    if (!order) return Promise.reject(new CertificateRejected('An ACME CA signs only within a validated order'))
    return this.call(async (client) => {
      // The same CSR policy as the built-in CA's, before the order is finalised with it.
      await readCsr(req.csr)
      let state = await unlessForgotten(client.getOrder({ url: order.url } as Acme.Order))
      if (!state) throw new Error(`${ORDER_FORGOTTEN}; the next check makes a new one`)
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

  /**
   * Runs `fn` with the account's client; a problem the CA answers becomes the error's message. When the CA no
   * longer knows the account (it forgot it, or it was deactivated), a new one is registered and `fn` runs again.
   */
  private async call<T>(fn: (client: Acme.Client) => Promise<T>): Promise<T> {
    const state: CallState = { agent: this.agent, problem: null, lastStatus: null, badNonces: 0 }
    return calls.run(state, async () => {
      try {
        try {
          return await fn(await this.account())
        } catch (err) {
          const lost = accountLost(state.problem)
          if (!lost) throw err
          await this.registerAgain(lost === 'deactivated')
          state.problem = null
          return await fn(await this.account())
        }
      } catch (err) {
        if (err instanceof CertificateRejected) throw err
        const problem = state.problem
        if (problem && REFUSALS.has(problem.type)) throw new CertificateRejected(problem.detail || problem.type)
        const origin = new URL(this.opts.directoryUrl).origin
        if (problem) {
          const type = problem.type.replace(PROBLEM, '')
          throw new Error(`The ACME server ${origin} answered ${problem.status} ${type}: ${problem.detail}`)
        }
        // acme-client's error for an answer without a problem document (a 404) has an empty message.
        const message = (err as Error).message || 'no detail'
        if (err instanceof TypeError || !state.lastStatus || state.lastStatus < 400)
          throw new Error(
            `The ACME server ${origin} cannot be reached (${err instanceof TypeError ? 'no answer' : message})`,
          )
        throw new Error(`The ACME server ${origin} answered ${state.lastStatus} (${message})`)
      } finally {
        if (state.badNonces) this.log.debug({ badNonces: state.badNonces }, 'the ACME server rejected nonces; resent')
      }
    })
  }

  /**
   * Forgets the account's registration (and, when the CA deactivated it, its key: a deactivated account cannot be
   * used again), so the next call registers anew.
   */
  private async registerAgain(newKey: boolean): Promise<void> {
    const url = this.opts.directoryUrl
    const key = newKey ? (await requireAcme().crypto.createPrivateEcdsaKey('P-256')).toString() : null
    await repo.forgetAcmeAccount(this.db, url, key === null ? null : this.secrets.seal(key, keyContext(url)))
    this.client = null
    this.log.warn({ directory: url, newKey }, 'the ACME server no longer knows the account: registering again')
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
      return values.includes(authz.keyAuthorization) ? null : `The TXT record ${name} is not served with the value yet`
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

/** What `request` resolves to, or null when the CA answers that it does not know the object (404, or not ours). */
async function unlessForgotten<T>(request: Promise<T>): Promise<T | null> {
  try {
    return await request
  } catch (err) {
    const { lastStatus, problem } = calls.getStore() ?? {}
    if (lastStatus === 404 || (problem?.type === `${PROBLEM}unauthorized` && !accountLost(problem))) return null
    throw err
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
