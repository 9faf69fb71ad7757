// DNS benchmark (not part of `npm test`): queries/s and latency of the built-in DNS server under a small,
// bounded UDP load on loopback, and the time from a database write to the new answer being served.
// Run: npx tsx bench/dns.ts   (BENCH_DNS_QUERIES, BENCH_DNS_INFLIGHT, BENCH_DATABASE_URL=postgres://… optional)
// Last, the load again with DNSSEC on for the zone and the DO bit in every query (answers signed online).
import { spawn } from 'node:child_process'
import dgram from 'node:dgram'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import dnsPacket from 'dns-packet'
import pg from 'pg'
import pino from 'pino'
import { loadConfig } from '../src/config/config.js'
import { createContext } from '../src/context.js'
import { migrate } from '../src/db/migrate.js'
import { BuiltinDnsServer } from '../src/drivers/dns/builtin.js'
import { zoneSourceOf } from '../src/modules/domains/dns/zone-source.js'

const ZONE = 'bench.example'
const QUERIES = [
  [ZONE, 'A'],
  [`www.${ZONE}`, 'A'],
  [ZONE, 'MX'],
  [ZONE, 'TXT'],
  [`missing.${ZONE}`, 'A'],
  [`host7.wild.${ZONE}`, 'AAAA'],
  [`_sip._tcp.${ZONE}`, 'SRV'],
] as const

interface LoadResult {
  sent: number
  answered: number
  lost: number
  seconds: number
  qps: number
  p50: number
  p99: number
  max: number
}

/**
 * The load generator, run in its own process: `total` queries over one UDP socket, `inflight` at a time; with
 * `dnssec` each query has EDNS0 with the DO bit.
 */
async function generate(port: number, total: number, inflight: number, dnssec = false): Promise<LoadResult> {
  const edns = { name: '.', type: 'OPT', udpPayloadSize: 1232, flags: dnsPacket.DNSSEC_OK, options: [] }
  const additionals = dnssec ? [edns as unknown as dnsPacket.Answer] : []
  const sock = dgram.createSocket('udp4')
  const pending = new Map<number, { at: bigint; timer: NodeJS.Timeout }>()
  const latencies: number[] = []
  let sent = 0
  let lost = 0
  const start = process.hrtime.bigint()
  await new Promise<void>((resolve) => {
    const next = () => {
      if (sent >= total) {
        if (pending.size === 0) resolve()
        return
      }
      const id = sent % 65536
      const [name, type] = QUERIES[sent % QUERIES.length]!
      sent++
      const buf = dnsPacket.encode({ id, type: 'query', flags: 0, questions: [{ name, type }], additionals })
      const timer = setTimeout(() => {
        pending.delete(id)
        lost++
        next()
      }, 1000)
      pending.set(id, { at: process.hrtime.bigint(), timer })
      sock.send(buf, port, '127.0.0.1')
    }
    sock.on('message', (msg) => {
      const id = msg.readUInt16BE(0)
      const p = pending.get(id)
      if (!p) return
      clearTimeout(p.timer)
      pending.delete(id)
      latencies.push(Number(process.hrtime.bigint() - p.at) / 1e6)
      next()
    })
    for (let i = 0; i < inflight; i++) next()
  })
  const seconds = Number(process.hrtime.bigint() - start) / 1e9
  sock.close()
  latencies.sort((a, b) => a - b)
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? NaN
  return {
    sent,
    answered: latencies.length,
    lost,
    seconds,
    qps: latencies.length / seconds,
    p50: pct(0.5),
    p99: pct(0.99),
    max: latencies.at(-1) ?? NaN,
  }
}

function runLoad(port: number, total: number, inflight: number, dnssec = false): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        ...process.execArgv,
        new URL(import.meta.url).pathname,
        'load',
        String(port),
        String(total),
        String(inflight),
        dnssec ? '1' : '0',
      ],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    )
    let out = ''
    child.stdout.on('data', (c) => (out += c))
    child.on('exit', (code) =>
      code === 0
        ? resolve(JSON.parse(out.trim().split('\n').pop()!))
        : reject(new Error(`load generator exited ${code}`)),
    )
  })
}

function ask(port: number, name: string, type: string): Promise<dnsPacket.Packet> {
  return new Promise((resolve, reject) => {
    const sock = dgram.createSocket('udp4')
    const timer = setTimeout(() => {
      sock.close()
      reject(new Error('timeout'))
    }, 1000)
    sock.on('message', (m) => {
      clearTimeout(timer)
      sock.close()
      resolve(dnsPacket.decode(m))
    })
    sock.send(
      dnsPacket.encode({ id: 1, type: 'query', questions: [{ name, type: type as dnsPacket.RecordType }] }),
      port,
      '127.0.0.1',
    )
  })
}

async function main() {
  const total = Number(process.env.BENCH_DNS_QUERIES ?? 50_000)
  const inflight = Number(process.env.BENCH_DNS_INFLIGHT ?? 32)
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostapi-bench-dns-'))
  const pgUrl = process.env.BENCH_DATABASE_URL
  // On PostgreSQL the benchmark works in a schema of its own, dropped at the end.
  const schema = `bench_dns_${process.pid}`
  const admin = async (q: string) => {
    const c = new pg.Client({ connectionString: pgUrl })
    await c.connect()
    await c.query(q)
    await c.end()
  }
  if (pgUrl) await admin(`create schema ${schema}`)
  const config = loadConfig({
    HOSTAPI_DATA_DIR: dataDir,
    HOSTAPI_LOG_LEVEL: 'warn',
    HOSTAPI_DNS_PORT: '0',
    HOSTAPI_WORKERS: '1',
    ...(pgUrl ? { DATABASE_URL: pgUrl, HOSTAPI_DB_SCHEMA: schema } : {}),
  })
  const ctx = createContext(config)
  const log = pino({ level: 'warn' })
  try {
    await migrate(ctx.db, ctx.dbSchema)
    const { accountId } = await ctx.services.iam.createAccount({
      name: 'Bench B.V.',
      email: `bench-${Date.now()}@example.com`,
      firstname: 'B',
      lastname: 'B',
    })
    const now = new Date().toISOString()
    await ctx.db.deleteFrom('domains').where('name', '=', ZONE).execute()
    const { id } = await ctx.db
      .insertInto('domains')
      .values({
        account_id: accountId,
        name: ZONE,
        status: 'active',
        status_id: 1,
        renewal_date: '2030-01-01',
        tags: '[]',
        nameservers: JSON.stringify([{ hostname: 'ns1.hostapi.test' }, { hostname: 'ns2.hostapi.test' }]),
        nameserver_profile: null,
        is_locked: 0,
        dnssec_enabled: 0,
        dnssec_keys: '[]',
        forwarder: null,
        forwarder_enabled: 0,
        managed_dns: 1,
        contacts: '{}',
        cancel_at: null,
        zone_serial: 1,
        created_at: now,
        updated_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow()
    const rec = (type: string, name: string, value: string) => ({
      domain_id: id,
      type,
      name,
      value,
      ttl: 300,
      created_at: now,
    })
    await ctx.db
      .insertInto('dns_records')
      .values([
        rec('A', ZONE, '192.0.2.1'),
        rec('MX', ZONE, `10 mail.${ZONE}.`),
        rec('TXT', ZONE, 'v=spf1 -all'),
        rec('CNAME', `www.${ZONE}`, `${ZONE}.`),
        rec('AAAA', `*.wild.${ZONE}`, '2001:db8::1'),
        rec('SRV', `_sip._tcp.${ZONE}`, `10 60 5060 sip.${ZONE}.`),
        ...Array.from({ length: 200 }, (_, i) => rec('A', `host${i}.${ZONE}`, `198.51.100.${i % 250}`)),
      ])
      .execute()

    const server = new BuiltinDnsServer(zoneSourceOf(ctx.db, ctx.secrets.box), { host: '127.0.0.1', port: 0 }, log)
    await server.start()
    const port = server.address()!.port
    console.log(
      `built-in DNS server on 127.0.0.1:${port} (${config.database.dialect}), ${total} UDP queries, ${inflight} in flight`,
    )
    await runLoad(port, Math.min(2000, total), inflight)
    const r = await runLoad(port, total, inflight)
    console.log(
      `queries/s: ${r.qps.toFixed(0)}   p50: ${r.p50.toFixed(3)} ms   p99: ${r.p99.toFixed(3)} ms   max: ${r.max.toFixed(3)} ms   answered ${r.answered}/${r.sent}, lost ${r.lost}`,
    )

    // Write → answer: the name is asked first (a cached NXDOMAIN, as when a validator looked too early), then a TXT
    // record is inserted and the serial bumped; polled every 2 ms until served.
    const rounds = 20
    for (const mode of ['publish', 'no publish (another instance)'] as const) {
      const times: number[] = []
      for (let i = 0; i < rounds; i++) {
        const name = `_acme-challenge${i}-${mode === 'publish' ? 'p' : 'n'}.${ZONE}`
        await ask(port, name, 'TXT')
        const t0 = performance.now()
        await ctx.db
          .insertInto('dns_records')
          .values(rec('TXT', name, `token-${i}`))
          .execute()
        const row = await ctx.db
          .selectFrom('domains')
          .select('zone_serial')
          .where('id', '=', id)
          .executeTakeFirstOrThrow()
        await ctx.db
          .updateTable('domains')
          .set({ zone_serial: row.zone_serial + 1 })
          .where('id', '=', id)
          .execute()
        if (mode === 'publish') await server.publish({ domain: ZONE, kind: 'records', names: [name] })
        for (;;) {
          const a = await ask(port, name, 'TXT')
          if ((a.answers ?? []).length > 0) break
          if (performance.now() - t0 > 5000) throw new Error('change not served within 5 s')
          await new Promise((res) => setTimeout(res, 2))
        }
        times.push(performance.now() - t0)
        await new Promise((res) => setTimeout(res, 37))
      }
      times.sort((a, b) => a - b)
      console.log(
        `write → served (${mode}): median ${times[rounds >> 1]!.toFixed(1)} ms, max ${times.at(-1)!.toFixed(1)} ms over ${rounds} writes`,
      )
    }

    // DNSSEC on: the zone gets its key (as turning it on through the API does), queries ask for signatures.
    await ctx.services.zoneKeys.create(id)
    await ctx.db.updateTable('domains').set({ dnssec_enabled: 1, zone_serial: 10_000 }).where('id', '=', id).execute()
    await server.publish({ domain: ZONE, kind: 'zone' })
    await runLoad(port, Math.min(2000, total), inflight, true)
    const signed = await runLoad(port, total, inflight, true)
    console.log(
      `with DNSSEC (DO bit, signed zone): queries/s: ${signed.qps.toFixed(0)}   p50: ${signed.p50.toFixed(3)} ms   ` +
        `p99: ${signed.p99.toFixed(3)} ms   max: ${signed.max.toFixed(3)} ms   ` +
        `answered ${signed.answered}/${signed.sent}, lost ${signed.lost}`,
    )
    await server.stop()
  } finally {
    await ctx.close()
    if (pgUrl) await admin(`drop schema if exists ${schema} cascade`)
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

if (process.argv[2] === 'load') {
  generate(Number(process.argv[3]), Number(process.argv[4]), Number(process.argv[5]), process.argv[6] === '1').then(
    (r) => console.log(JSON.stringify(r)),
  )
} else {
  main().catch((err) => {
    console.error(err)
    process.exit(1)
  })
}
