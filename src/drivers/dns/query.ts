import dnsPacket, { type Answer, type Packet, type Question } from 'dns-packet'
import type { Logger } from 'pino'
import { resolve, signResolution, type ZoneSnapshot } from './authority.js'

const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5, NOTAUTH: 9 } as const
/** The name of an RCODE the server answers with. */
export type Rcode = keyof typeof RCODE
const OPCODE_QUERY = 0
/** The EDNS buffer size we offer and honour at most (the DNS Flag Day 2020 value). */
const EDNS_UDP_SIZE = 1232

/**
 * Answers one DNS query from the zone `zoneFor` gives for its name and type, `reserve` bytes short of the transport's limit
 * (room for a TSIG); null when it must be dropped (not a query, unreadable header). Transfers are REFUSED here.
 */
export async function answerQuery(
  msg: Buffer,
  transport: 'udp' | 'tcp',
  zoneFor: (qname: string, qtype: string) => Promise<ZoneSnapshot | null>,
  log: Logger,
  reserve = 0,
): Promise<Buffer | null> {
  if (msg.length < 12) return null
  const id = msg.readUInt16BE(0)
  const rawFlags = msg.readUInt16BE(2)
  if (rawFlags & 0x8000) return null
  const opcode = (rawFlags >> 11) & 0xf
  const rd = rawFlags & dnsPacket.RECURSION_DESIRED
  let query: Packet
  try {
    query = dnsPacket.decode(msg)
  } catch {
    return headerOnly(id, opcode, rd, 'FORMERR')
  }
  if (opcode !== OPCODE_QUERY) return headerOnly(id, opcode, rd, 'NOTIMP')
  const question = query.questions?.length === 1 ? query.questions[0] : undefined
  if (!question) return headerOnly(id, opcode, rd, 'FORMERR')

  const opts = (query.additionals ?? []).filter((a) => a.type === 'OPT') as (Answer & {
    udpPayloadSize?: number
    ednsVersion?: number
    flags?: number
  })[]
  const edns = opts[0]
  // DO: the client wants DNSSEC records (RFC 3225), and the bit is copied to the answer.
  const dnssecOk = ((edns?.flags ?? 0) & dnsPacket.DNSSEC_OK) !== 0
  const reply: Packet & { questions: Question[] } = {
    id,
    type: 'response',
    flags: rd,
    questions: [question],
    answers: [],
    authorities: [],
    additionals: [],
  }
  const opt = edns
    ? ({
        name: '.',
        type: 'OPT',
        udpPayloadSize: EDNS_UDP_SIZE,
        extendedRcode: 0,
        ednsVersion: 0,
        flags: dnssecOk ? dnsPacket.DNSSEC_OK : 0,
        options: [],
      } as unknown as Answer)
    : null
  const finish = (rcode: Rcode, aa: boolean, truncated = false): Buffer => {
    reply.flags =
      rd | (aa ? dnsPacket.AUTHORITATIVE_ANSWER : 0) | (truncated ? dnsPacket.TRUNCATED_RESPONSE : 0) | RCODE[rcode]
    if (opt) reply.additionals = [...(reply.additionals ?? []), opt]
    return encodeFitting(reply, (transport === 'tcp' ? 65535 : udpLimit(edns?.udpPayloadSize)) - reserve)
  }
  if (opts.length > 1) return finish('FORMERR', false)
  if (edns && (edns.ednsVersion ?? 0) > 0) {
    // BADVERS (16): the upper bits go in the OPT record, the lower 4 bits (0) in the header.
    ;(opt as unknown as { extendedRcode: number }).extendedRcode = 1
    return finish('NOERROR', false)
  }
  const qtype = String(question.type).toUpperCase()
  const qclass = String(question.class ?? 'IN').toUpperCase()
  if (qclass !== 'IN' && qclass !== 'ANY') return finish('REFUSED', false)
  if (qtype === 'AXFR' || qtype === 'IXFR') return finish('REFUSED', false)
  const qname = question.name.toLowerCase().replace(/\.$/, '')

  let zone: ZoneSnapshot | null
  try {
    zone = await zoneFor(qname, qtype)
  } catch (err) {
    log.error({ err: String(err), qname }, 'DNS lookup failed')
    return finish('SERVFAIL', false)
  }
  if (!zone) return finish('REFUSED', false)
  // ANY over UDP is the classic amplification query: answer it only over TCP (TC set, nothing else).
  if (qtype === 'ANY' && transport === 'udp') return finish('NOERROR', true, true)
  const res = resolve(zone, qname, qtype)
  if (dnssecOk && zone.signer) {
    try {
      signResolution(zone, qname, qtype, res)
    } catch (err) {
      log.error({ err: String(err), qname }, 'DNSSEC signing failed')
      return finish('SERVFAIL', false)
    }
  }
  reply.answers = res.answers
  reply.authorities = res.authorities
  reply.additionals = res.additionals
  return finish(res.rcode, res.authoritative)
}

function udpLimit(advertised: number | undefined): number {
  if (!advertised) return 512
  return Math.max(512, Math.min(advertised, EDNS_UDP_SIZE))
}

/** Encodes the reply; when it does not fit, sends the question only with TC set so the client retries over TCP. */
function encodeFitting(reply: Packet & { questions: Question[] }, limit: number): Buffer {
  const full = dnsPacket.encode(reply)
  if (full.length <= limit) return full
  const opt = (reply.additionals ?? []).filter((a) => a.type === 'OPT')
  return dnsPacket.encode({
    ...reply,
    flags: (reply.flags ?? 0) | dnsPacket.TRUNCATED_RESPONSE,
    answers: [],
    authorities: [],
    additionals: opt,
  })
}

/** An answer to a readable request with its question and `rcode` only (no EDNS). */
export function errorReply(msg: Buffer, rcode: Rcode): Buffer {
  const id = msg.readUInt16BE(0)
  const opcode = (msg.readUInt16BE(2) >> 11) & 0xf
  try {
    const questions = dnsPacket.decode(msg).questions ?? []
    return dnsPacket.encode({ id, type: 'response', flags: (opcode << 11) | RCODE[rcode], questions })
  } catch {
    return headerOnly(id, opcode, 0, rcode === 'NOTAUTH' ? 'FORMERR' : rcode)
  }
}

/** A header-only answer with `rcode`, for a request whose question cannot be read. */
export function headerOnly(id: number, opcode: number, rd: number, rcode: Rcode): Buffer {
  const b = Buffer.alloc(12)
  b.writeUInt16BE(id, 0)
  b.writeUInt16BE(0x8000 | (opcode << 11) | rd | RCODE[rcode], 2)
  return b
}
