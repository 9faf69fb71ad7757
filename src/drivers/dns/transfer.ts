import ipaddr from 'ipaddr.js'
import dnsPacket, { type Answer, type Packet, type Question } from 'dns-packet'
import type { DnsSecondary } from '../../config/dns.js'
import { TimeSlices } from '../../lib/turns.js'

/** DNS type codes of the zone transfer questions. */
export const QTYPE_AXFR = 252
/** See `QTYPE_AXFR`. */
export const QTYPE_IXFR = 251
/** The largest DNS message over TCP (its length prefix is two bytes). */
export const TCP_MESSAGE_MAX = 65535

/** The addresses and ranges allowed to transfer zones (the secondaries). */
export class TransferAcl {
  private readonly ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][]

  constructor(secondaries: readonly DnsSecondary[]) {
    this.ranges = secondaries.map((s) => [ipaddr.parse(s.address), s.prefixLength])
  }

  /** Whether a client at `address` (as a socket reports it; IPv4-mapped IPv6 counts as IPv4) may transfer. */
  allows(address: string | undefined): boolean {
    if (!address || !ipaddr.isValid(address)) return false
    const addr = ipaddr.process(address)
    return this.ranges.some(([net, bits]) => net.kind() === addr.kind() && addr.match(net, bits))
  }
}

/** The type of the single question of a message in wire form, or null (no or several questions, unreadable). */
export function questionType(msg: Buffer): number | null {
  if (msg.length < 12 || msg.readUInt16BE(4) !== 1) return null
  for (let p = 12; ; ) {
    const len = msg[p]
    if (len === undefined) return null
    if (len === 0) return p + 5 <= msg.length ? msg.readUInt16BE(p + 1) : null
    if (len & 0xc0) return null
    p += 1 + len
  }
}

/** Serial number arithmetic (RFC 1982): whether serial `a` is newer than `b`. */
export function serialNewer(a: number, b: number): boolean {
  const d = ((a >>> 0) - (b >>> 0) + 2 ** 32) % 2 ** 32
  return d !== 0 && d < 2 ** 31
}

/** The serial an IXFR client holds: that of the SOA in the query's authority section, or null. */
export function ixfrClientSerial(query: Packet): number | null {
  type SoaAnswer = Answer & { data?: { serial?: number } }
  const soa = (query.authorities ?? []).find((a) => a.type === 'SOA') as SoaAnswer | undefined
  return typeof soa?.data?.serial === 'number' ? soa.data.serial : null
}

/**
 * Splits the records of a transfer into response messages of at most `limit` bytes each (the first one carries
 * the question), so each still fits one TCP message once signed. A large zone is encoded in time slices, the event
 * loop given a turn between them.
 */
export async function transferMessages(
  id: number,
  question: Question,
  records: Answer[],
  limit: number,
): Promise<Buffer[]> {
  const slices = new TimeSlices()
  const flags = dnsPacket.AUTHORITATIVE_ANSWER
  const headerSize = 12
  const questionSize = dnsPacket.encodingLength({ questions: [question] }) - headerSize
  const out: Buffer[] = []
  let chunk: Answer[] = []
  let size = headerSize + questionSize
  const flush = () => {
    const first = out.length === 0
    out.push(dnsPacket.encode({ id, type: 'response', flags, questions: first ? [question] : [], answers: chunk }))
    chunk = []
    size = headerSize
  }
  for (const r of records) {
    const len = dnsPacket.encodingLength({ answers: [r] }) - headerSize
    if (chunk.length && size + len > limit) {
      flush()
      if (slices.due) await slices.next()
    }
    chunk.push(r)
    size += len
  }
  if (chunk.length || out.length === 0) flush()
  return out
}
