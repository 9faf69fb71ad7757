import ipaddr from 'ipaddr.js'
import type { DnsRrlConfig } from '../../config/dns.js'

/** What becomes of one answer: sent, sent truncated in its place, or dropped. */
export type RrlVerdict = 'send' | 'slip' | 'drop'

interface Bucket {
  balance: number
  at: number
  limited: number
}

/** Bounds the table, which spoofed source addresses would otherwise grow without limit. */
const MAX_BUCKETS = 100_000
const RCODE_NOERROR = 0
const RCODE_NXDOMAIN = 3

/**
 * Response-rate limiting (after BIND's RRL): the UDP answers to one client prefix (/24 for IPv4, /56 for IPv6) for
 * one answer are limited to `responsesPerSecond`, so the server cannot be used to flood a forged source address
 * with its (DNSSEC-signed, larger) answers. One answer is the query name and type of a positive answer; every
 * NXDOMAIN and NODATA of a zone (`zoneOf` the query name) counts as one answer, so random names do not escape the
 * limit; every error of one kind as one. TCP is never limited: a client that gets a truncated answer (every
 * `slip`-th limited one) and retries over TCP proves its address.
 */
export class ResponseRateLimiter {
  private readonly buckets = new Map<string, Bucket>()

  constructor(
    private readonly opts: DnsRrlConfig,
    private readonly zoneOf: (qname: string) => string | null,
    private readonly now: () => number = () => performance.now() / 1000,
  ) {}

  /** The answer to send to the client at `address` in place of `reply`: itself, a truncated copy, or null. */
  filter(reply: Buffer, address: string): Buffer | null {
    const question = readQuestion(reply)
    if (!question) return reply
    const verdict = this.check(address, this.answerKey(reply, question))
    if (verdict === 'send') return reply
    return verdict === 'slip' ? truncated(reply, question.end) : null
  }

  /** Counts one answer `key` to the prefix of `address` and tells what becomes of it. */
  check(address: string, key: string): RrlVerdict {
    const rate = this.opts.responsesPerSecond
    if (rate <= 0) return 'send'
    const id = `${prefixOf(address)} ${key}`
    const now = this.now()
    let b = this.buckets.get(id)
    if (!b) {
      if (this.buckets.size >= MAX_BUCKETS) this.prune(now)
      b = { balance: rate, at: now, limited: 0 }
      this.buckets.set(id, b)
    }
    b.balance = Math.min(rate, b.balance + (now - b.at) * rate) - 1
    b.at = now
    if (b.balance >= 0) {
      b.limited = 0
      return 'send'
    }
    b.balance = Math.max(b.balance, -rate * this.opts.windowSeconds)
    b.limited++
    return this.opts.slip > 0 && b.limited % this.opts.slip === 0 ? 'slip' : 'drop'
  }

  /** Which answer `reply` is, for counting: see the class. */
  private answerKey(reply: Buffer, q: { name: string; type: number }): string {
    const rcode = reply.readUInt16BE(2) & 0x0f
    const answers = reply.readUInt16BE(6)
    if (rcode === RCODE_NOERROR && answers > 0) return `answer ${q.name} ${q.type}`
    if (rcode === RCODE_NOERROR || rcode === RCODE_NXDOMAIN) return `denial ${this.zoneOf(q.name) ?? q.name}`
    return `error ${rcode}`
  }

  /** Drops the buckets that have recovered; all of them when that is not enough. */
  private prune(now: number): void {
    for (const [id, b] of this.buckets)
      if (b.balance + (now - b.at) * this.opts.responsesPerSecond >= 0) this.buckets.delete(id)
    if (this.buckets.size >= MAX_BUCKETS) this.buckets.clear()
  }
}

/** The client prefix an address counts under: /24 for IPv4 (an IPv4-mapped IPv6 address counts as IPv4), /56 for IPv6. */
export function prefixOf(address: string): string {
  if (!ipaddr.isValid(address)) return address
  const addr = ipaddr.process(address)
  if (addr.kind() === 'ipv4') return `${(addr as ipaddr.IPv4).octets.slice(0, 3).join('.')}.0/24`
  return `${new ipaddr.IPv6((addr as ipaddr.IPv6).parts.map(keep56)).toString()}/56`
}

/** Part `i` of an IPv6 address within its first 56 bits: parts 0 to 2 whole, the high byte of part 3, then zeros. */
const keep56 = (part: number, i: number): number => (i < 3 ? part : i === 3 ? part & 0xff00 : 0)

/** The question of a message in wire form: its name (lower case, no trailing dot), type and where it ends. */
function readQuestion(msg: Buffer): { name: string; type: number; end: number } | null {
  if (msg.length < 12 || msg.readUInt16BE(4) !== 1) return null
  const labels: string[] = []
  for (let p = 12; ; ) {
    const len = msg[p]
    if (len === undefined) return null
    if (len === 0) {
      if (p + 5 > msg.length) return null
      return { name: labels.join('.').toLowerCase(), type: msg.readUInt16BE(p + 1), end: p + 5 }
    }
    if (len & 0xc0 || p + 1 + len > msg.length) return null
    labels.push(msg.toString('latin1', p + 1, p + 1 + len))
    p += 1 + len
  }
}

/** `reply` cut to its header and question, with TC set and no records: "ask again over TCP". */
function truncated(reply: Buffer, questionEnd: number): Buffer {
  const out = Buffer.from(reply.subarray(0, questionEnd))
  out.writeUInt16BE(out.readUInt16BE(2) | 0x0200, 2)
  out.writeUInt16BE(0, 6)
  out.writeUInt16BE(0, 8)
  out.writeUInt16BE(0, 10)
  return out
}
