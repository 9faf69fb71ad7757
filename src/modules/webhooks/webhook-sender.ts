import http from 'node:http'
import https from 'node:https'
import { lookup as dnsLookup } from 'node:dns/promises'
import net, { type LookupFunction } from 'node:net'
import tls from 'node:tls'
import { bareHost, isIpLiteral, isPublicAddress } from '../../lib/public-address.js'

/** One address a name resolves to. */
export interface ResolvedAddress {
  address: string
  family: number
}

/** Resolves a host name to its addresses; replaced in tests to play a DNS rebinding attack. */
export type Resolver = (host: string) => Promise<ResolvedAddress[]>

/** The system resolver (getaddrinfo), every address. */
export const systemResolver: Resolver = (host) => dnsLookup(host, { all: true, verbatim: true })

/** How the sender treats receivers. */
export interface SenderOptions {
  /** Plain `http://` URLs are sent to (sandbox, tests). */
  allowHttp: boolean
  /** Loopback, private and link-local addresses are connected to (sandbox, tests). */
  allowPrivate: boolean
  timeoutMs: number
  /** Extra certificate authorities (PEM) trusted for receivers, besides the system's. */
  ca: string | null
  /**
   * Where a checked address is connected to: the address itself when absent. Tests route public addresses to a
   * receiver on loopback with it, since no test traffic may leave the machine.
   */
  dial?: (checked: ResolvedAddress) => ResolvedAddress
}

/** What a receiver answered. */
export interface SendResult {
  status: number
  durationMs: number
}

/**
 * What the customer is told of an attempt that reached no receiver, whatever the cause (no DNS answer, connection
 * refused or reset, TLS failure, timeout): the cause would tell which private hosts and ports exist and are open.
 */
export const UNREACHABLE = 'The receiver could not be reached'
/** What the customer is told of a receiver refused because its address is not public. */
export const NOT_PUBLIC = 'Refused: the receiver is not at a public address'

/**
 * An attempt that did not reach a receiver or was refused before connecting: `message` says why in detail (for
 * the operator and the log), `summary` only the class of the failure (for the customer).
 */
export class SendError extends Error {
  constructor(
    message: string,
    readonly durationMs: number,
    readonly summary: string = UNREACHABLE,
  ) {
    super(message)
  }
}

// Only the start of an answer is read: receivers are asked for a 2xx, not for a body.
const BODY_CAP = 4096

/**
 * Sends one webhook: checks the URL's scheme, resolves its host once, refuses an address that is not public
 * (unless allowed) and connects to exactly the address it checked (the lookup of the connection is pinned to
 * it, so a second resolution cannot point elsewhere). Redirects are not followed; the whole exchange is
 * bounded by the timeout.
 */
export async function sendWebhook(
  url: string,
  headers: Record<string, string>,
  body: string,
  opts: SenderOptions,
  resolve: Resolver,
): Promise<SendResult> {
  const started = performance.now()
  const elapsed = () => Math.round(performance.now() - started)
  const target = new URL(url)
  if (target.protocol !== 'https:' && !(target.protocol === 'http:' && opts.allowHttp))
    throw new SendError(
      `Refused: ${target.protocol} URLs are not sent to`,
      0,
      `Refused: ${target.protocol} URLs are not sent to`,
    )
  const host = bareHost(target.hostname)
  let pinned: ResolvedAddress
  if (isIpLiteral(host)) pinned = { address: host, family: host.includes(':') ? 6 : 4 }
  else {
    let addresses: ResolvedAddress[]
    let timer: NodeJS.Timeout | undefined
    try {
      // The lookup counts against the attempt's timeout too.
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${opts.timeoutMs} ms`)), opts.timeoutMs)
      })
      addresses = await Promise.race([resolve(host), late])
    } catch (err) {
      throw new SendError(`DNS lookup of ${host} failed: ${(err as Error).message}`, elapsed())
    } finally {
      clearTimeout(timer)
    }
    if (addresses.length === 0) throw new SendError(`DNS lookup of ${host} found no address`, elapsed())
    // One private address among several refuses the name: the connection could land on any of them.
    const refused = addresses.find((a) => !opts.allowPrivate && !isPublicAddress(a.address))
    pinned = refused ?? addresses[0]
  }
  if (!opts.allowPrivate && !isPublicAddress(pinned.address))
    throw new SendError(
      `Refused: ${host} resolves to ${pinned.address}, which is not a public address`,
      elapsed(),
      NOT_PUBLIC,
    )
  // Answered asynchronously, as a real lookup is: a connection that fails at once (an address without a route, a
  // link-local one without a scope) then fails after the request is listening for it, not inside request().
  const to = opts.dial ? opts.dial(pinned) : pinned
  const lookup: LookupFunction = (_name, options, callback) => {
    setImmediate(() => {
      if (options.all) callback(null, [to])
      else callback(null, to.address, to.family)
    })
  }
  const secure = target.protocol === 'https:'
  return new Promise<SendResult>((done, fail) => {
    let timer: NodeJS.Timeout | undefined
    const failed = (err: Error) => {
      clearTimeout(timer)
      fail(new SendError(`Connection to ${pinned.address} failed: ${err.message}`, elapsed()))
    }
    // The socket is made here so that its errors are listened to from its creation on, whatever Node does first.
    const createConnection = (o: net.NetConnectOpts & tls.ConnectionOptions) => {
      const socket = secure ? tls.connect(o) : net.createConnection(o)
      socket.on('error', failed)
      return socket
    }
    let req: http.ClientRequest
    try {
      req = (secure ? https : http).request(
        {
          protocol: target.protocol,
          hostname: isIpLiteral(host) ? pinned.address : host,
          port: Number(target.port) || (secure ? 443 : 80),
          path: `${target.pathname}${target.search}`,
          method: 'POST',
          headers: {
            ...headers,
            'content-type': 'application/json',
            'content-length': String(Buffer.byteLength(body)),
          },
          lookup,
          createConnection: createConnection as never,
          ...(secure && opts.ca ? { ca: opts.ca } : {}),
          ...(secure && !isIpLiteral(host) ? { servername: host } : {}),
        },
        (res) => {
          let read = 0
          res.on('data', (chunk: Buffer) => {
            read += chunk.length
            if (read > BODY_CAP) res.destroy()
          })
          const finish = () => {
            clearTimeout(timer)
            done({ status: res.statusCode ?? 0, durationMs: elapsed() })
          }
          res.on('end', finish)
          res.on('close', finish)
          res.on('error', () => undefined)
        },
      )
    } catch (err) {
      failed(err as Error)
      return
    }
    const left = Math.max(1, opts.timeoutMs - elapsed())
    timer = setTimeout(() => req.destroy(new Error(`no answer within ${opts.timeoutMs} ms`)), left)
    req.on('error', failed)
    req.end(body)
  })
}
