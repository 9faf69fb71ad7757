import type { Server as HttpServer } from 'node:http'
import type { Server as NetServer, Socket } from 'node:net'
import ipaddr from 'ipaddr.js'
import { addressBlock } from './auth-throttle.js'

/** The time limits of a listener's connections, in milliseconds (Config['connections']). */
export interface ConnectionTimeouts {
  headersTimeoutMs: number
  requestTimeoutMs: number
  idleTimeoutMs: number
}

/**
 * Puts `handle` in front of what a server does with each new connection: `handle` gets the socket and `pass`, which
 * hands it on to the listeners the server had (TLS, HTTP); a socket never passed on is the handler's to close.
 */
export function interceptConnections(
  server: NetServer,
  handle: (socket: Socket, pass: (socket: Socket) => void) => void,
): void {
  const listeners = server.listeners('connection') as ((socket: Socket) => void)[]
  server.removeAllListeners('connection')
  const pass = (socket: Socket) => {
    for (const listener of listeners) listener.call(server, socket)
  }
  server.on('connection', (socket: Socket) => handle(socket, pass))
}

/**
 * Open connections per client address, over every listener of the process: an IPv4 address counts alone, an IPv6
 * address for its /64 (the block one subscriber usually holds, as one IPv4 address; counted per address, one
 * host could open a connection from each of its 2⁶⁴). Addresses in `exempt` (the trusted proxies, which carry
 * many clients' requests) are not counted. `max` 0 admits every connection.
 */
export class ConnectionCap {
  private readonly open = new Map<string, number>()
  private readonly exempt: [ipaddr.IPv4 | ipaddr.IPv6, number][]

  constructor(
    private readonly max: number,
    exempt: string[],
  ) {
    this.exempt = exempt.map((e) =>
      e.includes('/') ? ipaddr.parseCIDR(e) : [ipaddr.process(e), ipaddr.process(e).kind() === 'ipv4' ? 32 : 128],
    )
  }

  /**
   * Counts `socket` against its address until it closes; false (and not counted) when that address already has
   * `max` connections open or the socket has no address left (already closed).
   */
  admit(socket: Socket): boolean {
    const ip = socket.remoteAddress
    if (ip === undefined) return false
    if (this.max === 0 || this.isExempt(ip)) return true
    const block = addressBlock(ip)
    const n = this.open.get(block) ?? 0
    if (n >= this.max) return false
    this.open.set(block, n + 1)
    socket.once('close', () => {
      const left = (this.open.get(block) ?? 1) - 1
      if (left > 0) this.open.set(block, left)
      else this.open.delete(block)
    })
    return true
  }

  private isExempt(ip: string): boolean {
    if (this.exempt.length === 0) return false
    try {
      const addr = ipaddr.process(ip)
      return this.exempt.some(([range, bits]) => range.kind() === addr.kind() && addr.match(range, bits))
    } catch {
      return false
    }
  }
}

/**
 * Applies the time limits and the per-address cap to one listener, before it listens. Node checks the head and
 * request deadlines of open connections on a timer: every second, or a quarter of the shorter limit when that
 * is under 4 s, so a limit is enforced within that much. Past the cap a new connection is reset at once, before
 * TLS or HTTP spend anything on it (answering would take the TLS handshake the cap saves).
 */
export function guardListener(server: HttpServer, timeouts: ConnectionTimeouts, cap: ConnectionCap): void {
  server.headersTimeout = timeouts.headersTimeoutMs
  server.requestTimeout = timeouts.requestTimeoutMs
  server.keepAliveTimeout = timeouts.idleTimeoutMs
  // Read by Node when the server starts listening; not declared as a property by @types/node.
  ;(server as HttpServer & { connectionsCheckingInterval: number }).connectionsCheckingInterval = Math.max(
    25,
    Math.min(1000, Math.floor(Math.min(timeouts.headersTimeoutMs, timeouts.requestTimeoutMs) / 4)),
  )
  interceptConnections(server, (socket, pass) => {
    if (cap.admit(socket)) pass(socket)
    else {
      socket.on('error', () => undefined)
      socket.resetAndDestroy()
    }
  })
}
