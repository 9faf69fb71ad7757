import dgram from 'node:dgram'
import net from 'node:net'
import { randomInt } from 'node:crypto'
import dnsPacket, { type Answer } from 'dns-packet'
import type { Logger } from 'pino'
import { signTsig, verifyTsig, type TsigKey } from '../../lib/dns/tsig.js'
import { serialNewer } from './transfer.js'

/** Where NOTIFY messages go: a secondary's address and port. */
export interface NotifyTarget {
  host: string
  port: number
}

const OPCODE_NOTIFY = 4
/** How long each attempt waits for an answer before the next (ms): four tries over about 15 s. */
const DEFAULT_TIMEOUTS_MS = [1000, 2000, 4000, 8000]
/** After an acknowledged NOTIFY: when the secondary's SOA is asked for (ms after the last), about a minute in all. */
const CONFIRM_DELAYS_MS = [1000, 2000, 4000, 8000, 15000, 30000]
/** How long an SOA query to the secondary waits for its answer. */
const CONFIRM_ANSWER_MS = 500

/** Resolves after `ms`, or at once when `signal` aborts. */
function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const timer = setTimeout(done, ms)
    function done() {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    signal.addEventListener('abort', done)
  })
}

/** The SOA serial in the answer to query `id`, or null (another message, no SOA answer, unreadable). */
function soaSerialOf(reply: Buffer, id: number): number | null {
  if (reply.length < 12 || reply.readUInt16BE(0) !== id) return null
  try {
    const soa = dnsPacket.decode(reply).answers?.find((a) => a.type === 'SOA') as
      | { data?: { serial?: number } }
      | undefined
    return soa?.data?.serial ?? null
  } catch {
    return null
  }
}

/**
 * Sends NOTIFY (RFC 1996) over UDP to the secondaries when a zone changed, TSIG-signed when a key is set, each
 * retried with backoff until answered. `notify` returns at once (fire and forget; outcomes are logged); a newer
 * notice for the same zone and secondary replaces one still being retried.
 */
export class ZoneNotifier {
  private readonly inFlight = new Map<string, AbortController>()

  constructor(
    private readonly targets: readonly NotifyTarget[],
    private readonly key: TsigKey | null,
    private readonly log: Logger,
    private readonly timeoutsMs: readonly number[] = DEFAULT_TIMEOUTS_MS,
  ) {}

  /** Tells every secondary that `zone` changed; `soa` (its new SOA record) goes in the answer section. */
  notify(zone: string, soa: Answer): void {
    for (const target of this.targets) {
      const k = `${zone} ${target.host} ${target.port}`
      this.inFlight.get(k)?.abort()
      const ac = new AbortController()
      this.inFlight.set(k, ac)
      void this.send(zone, soa, target, ac.signal)
        .catch((err) => this.log.warn({ zone, secondary: target, err: String(err) }, 'DNS NOTIFY failed'))
        .finally(() => {
          if (this.inFlight.get(k) === ac) this.inFlight.delete(k)
        })
    }
  }

  /** Abandons every NOTIFY still being retried. */
  stop(): void {
    for (const ac of this.inFlight.values()) ac.abort()
    this.inFlight.clear()
  }

  private async send(zone: string, soa: Answer, target: NotifyTarget, signal: AbortSignal): Promise<void> {
    const socket = dgram.createSocket(net.isIPv6(target.host) ? 'udp6' : 'udp4')
    const serial = (soa as { data?: { serial?: number } }).data?.serial
    const replies: Buffer[] = []
    let wake: (() => void) | null = null
    socket.on('message', (msg) => {
      replies.push(msg)
      wake?.()
    })
    socket.on('error', (err) => this.log.warn({ zone, secondary: target, err: err.message }, 'DNS NOTIFY socket error'))
    const onAbort = () => wake?.()
    signal.addEventListener('abort', onAbort)
    try {
      for (const [attempt, timeoutMs] of this.timeoutsMs.entries()) {
        if (signal.aborted) return
        const id = randomInt(0, 65536)
        const unsigned = dnsPacket.encode({
          id,
          type: 'query',
          flags: (OPCODE_NOTIFY << 11) | dnsPacket.AUTHORITATIVE_ANSWER,
          questions: [{ name: zone, type: 'SOA', class: 'IN' }],
          answers: [soa],
        })
        const now = Math.floor(Date.now() / 1000)
        const signed = this.key ? signTsig(unsigned, this.key, { now }) : { message: unsigned, mac: null }
        socket.send(signed.message, target.port, target.host)
        const resend = () => {
          const again = this.key ? signTsig(unsigned, this.key, { now: Math.floor(Date.now() / 1000) }) : signed
          socket.send(again.message, target.port, target.host)
        }
        const deadline = Date.now() + timeoutMs
        while (!signal.aborted && Date.now() < deadline) {
          const reply = replies.shift()
          if (!reply) {
            await new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, deadline - Date.now())
              wake = () => {
                clearTimeout(timer)
                resolve()
              }
            })
            wake = null
            continue
          }
          if (reply.length < 12 || reply.readUInt16BE(0) !== id || !(reply.readUInt16BE(2) & 0x8000)) continue
          const rcode = reply.readUInt16BE(2) & 0xf
          const answeredAt = Math.floor(Date.now() / 1000)
          const requestMac = signed.mac
          const check = this.key && requestMac ? verifyTsig(reply, this.key, { now: answeredAt, requestMac }) : null
          const fields = { zone, secondary: target, serial, attempt: attempt + 1 }
          if (rcode !== 0) this.log.warn({ ...fields, rcode }, 'DNS NOTIFY refused by a secondary')
          else if (check?.status !== undefined && check.status !== 'ok') {
            this.log.warn({ ...fields, tsig: check.status }, 'DNS NOTIFY answer not signed correctly')
          } else {
            this.log.info(fields, 'DNS NOTIFY acknowledged')
            if (serial !== undefined) await this.confirm(zone, serial, target, socket, replies, signal, resend)
          }
          return
        }
      }
      const attempts = this.timeoutsMs.length
      if (!signal.aborted) this.log.warn({ zone, secondary: target, serial, attempts }, 'DNS NOTIFY not answered')
    } finally {
      signal.removeEventListener('abort', onAbort)
      socket.close()
    }
  }

  /**
   * After a secondary acknowledged a NOTIFY: asks it for the zone's SOA until it serves `serial` (or newer), and
   * notifies it again each time it does not yet (a secondary busy with a refresh may drop a NOTIFY, and would then
   * wait for the SOA refresh, hours). Gives up after CONFIRM_DELAYS_MS, logged; a newer notice replaces it.
   */
  private async confirm(
    zone: string,
    serial: number,
    target: NotifyTarget,
    socket: dgram.Socket,
    replies: Buffer[],
    signal: AbortSignal,
    resend: () => void,
  ): Promise<void> {
    for (const delayMs of CONFIRM_DELAYS_MS) {
      await abortableDelay(delayMs, signal)
      if (signal.aborted) return
      const id = randomInt(0, 65536)
      replies.length = 0
      socket.send(
        dnsPacket.encode({ id, type: 'query', questions: [{ name: zone, type: 'SOA', class: 'IN' }] }),
        target.port,
        target.host,
      )
      await abortableDelay(CONFIRM_ANSWER_MS, signal)
      const served = replies.map((r) => soaSerialOf(r, id)).find((v) => v !== null)
      if (served !== undefined && served !== null && !serialNewer(serial, served)) {
        this.log.info({ zone, secondary: target, serial, served }, 'DNS secondary serves the notified serial')
        return
      }
      this.log.info(
        { zone, secondary: target, serial, served: served ?? null },
        'DNS NOTIFY sent again: not served yet',
      )
      resend()
    }
    this.log.warn({ zone, secondary: target, serial }, 'DNS secondary does not serve the notified serial')
  }
}
