import dgram from 'node:dgram'
import net from 'node:net'
import { randomInt } from 'node:crypto'
import dnsPacket, { type Answer } from 'dns-packet'
import type { Logger } from 'pino'
import { signTsig, verifyTsig, type TsigKey } from '../../lib/dns/tsig.js'

/** Where NOTIFY messages go: a secondary's address and port. */
export interface NotifyTarget {
  host: string
  port: number
}

const OPCODE_NOTIFY = 4
/** How long each attempt waits for an answer before the next (ms): four tries over about 15 s. */
const DEFAULT_TIMEOUTS_MS = [1000, 2000, 4000, 8000]

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
          } else this.log.info(fields, 'DNS NOTIFY acknowledged')
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
}
