import dgram from 'node:dgram'
import dnsPacket, { type Answer } from 'dns-packet'

/** What the built-in DNS server answered to one question. */
export interface ProbeAnswer {
  name: string
  type: string
  /** NOERROR, NXDOMAIN, REFUSED…, or `timeout` when no answer came. */
  rcode: string
  /** Each answer record in presentation form: `name ttl type data`. */
  answers: string[]
}

const TIMEOUT_MS = 1000

const dataOf = (a: Answer): string => {
  const d = (a as { data?: unknown }).data
  if (Buffer.isBuffer(d)) return d.toString('hex')
  if (Array.isArray(d)) return d.map((x) => (Buffer.isBuffer(x) ? x.toString() : String(x))).join(' ')
  if (d && typeof d === 'object') return Object.values(d).map(String).join(' ')
  return String(d)
}

/**
 * Asks the built-in DNS server at `address` (this process's, on loopback) each question over UDP, as a resolver
 * would, and reports what it answered: the inspector shows it beside the records the database holds.
 */
export async function probeDns(
  address: { host: string; port: number },
  questions: { name: string; type: string }[],
): Promise<ProbeAnswer[]> {
  if (questions.length === 0) return []
  const socket = dgram.createSocket(address.host.includes(':') ? 'udp6' : 'udp4')
  // A send that fails (the server gone, a full buffer) must not end the process: its question times out.
  socket.on('error', () => undefined)
  const pending = new Map<number, (a: ProbeAnswer) => void>()
  socket.on('message', (msg) => {
    try {
      const p = dnsPacket.decode(msg)
      const q = p.questions?.[0]
      pending.get(p.id ?? -1)?.({
        name: q?.name ?? '',
        type: q?.type ?? '',
        rcode: (p as { rcode?: string }).rcode ?? 'NOERROR',
        answers: (p.answers ?? []).map((a) => `${a.name} ${'ttl' in a ? a.ttl : ''} ${a.type} ${dataOf(a)}`),
      })
    } catch {
      // An unreadable datagram answers nothing: the question times out.
    }
  })
  try {
    return await Promise.all(
      questions.map(
        (q, i) =>
          new Promise<ProbeAnswer>((resolve) => {
            const id = i + 1
            const timer = setTimeout(() => resolve({ ...q, rcode: 'timeout', answers: [] }), TIMEOUT_MS)
            pending.set(id, (a) => {
              clearTimeout(timer)
              resolve({ ...a, name: q.name, type: q.type })
            })
            const msg = dnsPacket.encode({
              type: 'query',
              id,
              flags: 0,
              questions: [{ name: q.name, type: q.type as 'A', class: 'IN' }],
            })
            socket.send(msg, address.port, address.host, () => undefined)
          }),
      ),
    )
  } finally {
    socket.close()
  }
}
