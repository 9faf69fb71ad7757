import fs from 'node:fs'
import dgram from 'node:dgram'
import net from 'node:net'
import { execFile } from 'node:child_process'
import { randomInt } from 'node:crypto'
import dnsPacket, { type Packet } from 'dns-packet'
import type { Db } from '../../src/db/database.js'
import { later, withDeadline } from './wait.js'

/** What a test zone starts with. */
export interface ZoneSeed {
  status?: string
  serial?: number
  nameservers?: { hostname: string; ipv4?: string | null; ipv6?: string | null }[]
  records?: { type: string; name: string; value: string; ttl?: number }[]
}

const now = () => new Date().toISOString()

/** Inserts a domain row and its records straight into the tables; returns the domain id. */
export async function insertZone(db: Db, accountId: number, name: string, seed: ZoneSeed = {}): Promise<number> {
  const row = await db
    .insertInto('domains')
    .values({
      account_id: accountId,
      name,
      status: seed.status ?? 'active',
      status_id: 1,
      renewal_date: '2030-01-01',
      tags: '[]',
      nameservers: JSON.stringify(
        seed.nameservers ?? [{ hostname: 'ns1.hostapi.test' }, { hostname: 'ns2.hostapi.test' }],
      ),
      nameserver_profile: null,
      is_locked: 0,
      dnssec_enabled: 0,
      dnssec_keys: '[]',
      forwarder: null,
      forwarder_enabled: 0,
      managed_dns: 1,
      contacts: '{}',
      cancel_at: null,
      zone_serial: seed.serial ?? 1,
      created_at: now(),
      updated_at: now(),
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  if (seed.records?.length) await addRecords(db, row.id, seed.records)
  return row.id
}

/** Adds records (stored form) to a domain, without touching its serial. */
export async function addRecords(db: Db, domainId: number, records: NonNullable<ZoneSeed['records']>): Promise<void> {
  await db
    .insertInto('dns_records')
    .values(
      records.map((r) => ({
        domain_id: domainId,
        type: r.type,
        name: r.name,
        value: r.value,
        ttl: r.ttl ?? 3600,
        created_at: now(),
      })),
    )
    .execute()
}

/** Increments a domain's zone serial, as every change through the API does. */
export async function bumpSerial(db: Db, domainId: number): Promise<void> {
  const row = await db.selectFrom('domains').select('zone_serial').where('id', '=', domainId).executeTakeFirstOrThrow()
  await db
    .updateTable('domains')
    .set({ zone_serial: row.zone_serial + 1 })
    .where('id', '=', domainId)
    .execute()
}

export interface QueryOptions {
  /** Adds an OPT record (EDNS0) advertising this UDP size. */
  edns?: number
  ednsVersion?: number
  /** Sets the DO bit (DNSSEC records wanted), with EDNS0 at 1232 bytes unless `edns` says otherwise. */
  dnssec?: boolean
  qclass?: string
  /** Raw bytes to send instead of an encoded query. */
  raw?: Buffer
  timeoutMs?: number
}

function encodeQuery(name: string, type: string, opts: QueryOptions): { id: number; buf: Buffer } {
  const id = randomInt(0, 65536)
  const packet = {
    id,
    type: 'query' as const,
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ name, type, class: opts.qclass ?? 'IN' }],
    additionals:
      opts.edns !== undefined || opts.dnssec
        ? [
            {
              name: '.',
              type: 'OPT',
              udpPayloadSize: opts.edns ?? 1232,
              ednsVersion: opts.ednsVersion ?? 0,
              flags: opts.dnssec ? dnsPacket.DNSSEC_OK : 0,
              options: [],
            },
          ]
        : [],
  }
  // Types and classes come as plain strings and the OPT record leaves out fields dns-packet's typings require.
  return { id, buf: opts.raw ?? dnsPacket.encode(packet as unknown as Packet) }
}

/** One query over UDP to 127.0.0.1:`port`; resolves with the decoded reply and its size. */
export function queryUdp(
  port: number,
  name: string,
  type: string,
  opts: QueryOptions = {},
): Promise<Packet & { size: number; raw: Buffer }> {
  const { buf } = encodeQuery(name, type, opts)
  const sock = dgram.createSocket('udp4')
  const answer = new Promise<Packet & { size: number; raw: Buffer }>((resolve, reject) => {
    sock.on('message', (msg) => {
      try {
        resolve({ ...dnsPacket.decode(msg), size: msg.length, raw: msg })
      } catch (err) {
        reject(err as Error)
      }
    })
    sock.send(buf, port, '127.0.0.1')
  })
  return withDeadline(answer, opts.timeoutMs ?? 2000, `no UDP answer for ${name} ${type}`).finally(() => sock.close())
}

/** One query over TCP (two-byte length prefix) to 127.0.0.1:`port`. */
export function queryTcp(
  port: number,
  name: string,
  type: string,
  opts: QueryOptions = {},
): Promise<Packet & { size: number; raw: Buffer }> {
  const { buf } = encodeQuery(name, type, opts)
  const sock = net.connect(port, '127.0.0.1')
  const answer = new Promise<Packet & { size: number; raw: Buffer }>((resolve, reject) => {
    let data = Buffer.alloc(0)
    sock.on('error', reject)
    sock.on('connect', () => {
      // Sent in two writes to prove the server reassembles a message split across segments.
      const prefix = Buffer.alloc(2)
      prefix.writeUInt16BE(buf.length)
      sock.write(Buffer.concat([prefix, buf.subarray(0, 5)]))
      later(5, () => sock.write(buf.subarray(5)))
    })
    sock.on('data', (chunk) => {
      data = Buffer.concat([data, chunk])
      if (data.length >= 2 && data.length >= 2 + data.readUInt16BE(0)) {
        const msg = data.subarray(2, 2 + data.readUInt16BE(0))
        try {
          resolve({ ...dnsPacket.decode(msg), size: msg.length, raw: msg })
        } catch (err) {
          reject(err as Error)
        }
      }
    })
  })
  return withDeadline(answer, opts.timeoutMs ?? 2000, `no TCP answer for ${name} ${type}`).finally(() => sock.destroy())
}

/** Runs `dig @127.0.0.1 -p <port> …args` and returns its output. */
export function dig(port: number, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('dig', ['@127.0.0.1', '-p', String(port), '+time=2', '+tries=1', ...args], (err, stdout, stderr) => {
      if (err && !stdout) reject(new Error(`dig failed: ${stderr || err.message}`))
      else resolve(stdout)
    })
  })
}

/**
 * The first port the kernel hands out to a socket bound to port 0 (a client's source port): the low end of
 * ip_local_port_range on Linux, 32768 by default.
 */
function ephemeralLow(): number {
  try {
    const low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0])
    return Number.isInteger(low) && low > 11_000 ? low : 32_768
  } catch {
    return 32_768
  }
}

const bindsUdp = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = dgram.createSocket('udp4')
    s.once('error', () => resolve(false))
    s.bind(port, '127.0.0.1', () => s.close(() => resolve(true)))
  })

const bindsTcp = (port: number) =>
  new Promise<boolean>((resolve) => {
    const srv = net.createServer()
    srv.once('error', () => resolve(false))
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)))
  })

/**
 * A port free for both UDP and TCP on 127.0.0.1 right now, below the range the kernel hands out as source ports. A
 * server a test stops and starts again on its port (a DNS server, pebble, Redis) then never finds it taken by some
 * client's socket meanwhile: with a port from that range, knotd's restart failed with `address already in use`.
 */
export async function freePort(): Promise<number> {
  const high = ephemeralLow()
  for (;;) {
    const port = 10_000 + Math.floor(Math.random() * (high - 10_000))
    if ((await bindsUdp(port)) && (await bindsTcp(port))) return port
  }
}

/** The TXT strings of the answers, each joined. */
export function txtOf(p: Packet): string[] {
  return (p.answers ?? [])
    .filter((a) => a.type === 'TXT')
    .map((a) => (a as unknown as { data: Buffer[] }).data.map((b) => b.toString('utf8')).join(''))
}
