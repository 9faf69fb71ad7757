// The fault suite: the production topology (PostgreSQL, Redis, two instances as processes, PowerDNS, pebble, an SMTP
// server, a webhook receiver) under seeded customer traffic while faults are injected: an instance SIGKILLed at a
// random point after a write (a domain order, a certificate request, a DNS change with its webhook, a ticket with its
// mail) and started again; PowerDNS, pebble, the SMTP server and Redis stopped and started again. Afterwards every
// acknowledged write's effect arrives within a bound, nothing is left stranded, and no event arrives twice except
// after an instance was killed mid-delivery (webhooks are at-least-once). FAULT_SEED=<n> repeats a run.
import fs from 'node:fs'
import { randomBytes, randomInt } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { describeWithEnv, processDatabase, rawRows, request, tempDir, type ProcessDatabase } from './helpers/app.js'
import { freePort, queryUdp, txtOf } from './helpers/dns.js'
import { startPebble, type Pebble } from './helpers/pebble.js'
import { powerDnsMissing, startPowerDns, type PowerDns } from './helpers/powerdns.js'
import { knotMissing, startKnot, type Knot } from './helpers/knot.js'
import { runAdminCli, spawnServer, type ServerProcess } from './helpers/process.js'
import { OwnRedis } from './helpers/redis.js'
import { selfSignedCert, startSmtpServer, type TestSmtpServer } from './helpers/smtp.js'
import { startReceiver, type Receiver } from './helpers/webhook-receiver.js'
import { opensslCsr } from './helpers/pki.js'
import { contactProfile } from './helpers/fixtures/domains.js'
import { CRASH_POINTS } from '../src/ops/crash-points.js'
import { eventually, pace } from './helpers/wait.js'

// Fixed by default, so `npm test` is repeatable (as the fuzz test's seed is); FAULT_SEED=random draws one.
const SEED = process.env.FAULT_SEED === 'random' ? randomInt(2 ** 31) : Number(process.env.FAULT_SEED ?? 1964179164)
/** How long after the last fault every effect must have arrived. */
const BOUND_MS = 60_000
const LISTENING = /^hostapi listening on (https:\/\/\S+)/

/** mulberry32: a small seeded PRNG, so a run is repeated by its seed. */
function prng(seed: number) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)],
  }
}

const pebbleMissing = fs.existsSync('/usr/bin/pebble') ? false : 'pebble not installed'
/**
 * The two ways hostapi serves DNS in production, each a run of the suite: PowerDNS (its API), or the built-in server
 * of each instance as a hidden primary with a Knot secondary that serves the zones (NOTIFY, transfers, the catalog
 * zone for new domains). FAULT_DNS=powerdns or FAULT_DNS=knot runs one.
 */
type DnsTopology = 'powerdns' | 'knot'
/** The crash points a domain order's request passes (the instance armed with one dies in the customer's request). */
const ORDER_CRASH_POINTS = CRASH_POINTS.filter((p) => p.startsWith('orders.create.'))
const TOPOLOGIES = (process.env.FAULT_DNS ?? 'powerdns,knot').split(',') as DnsTopology[]
const CATALOG = 'catalog.hostapi.invalid'

type WriteKind = 'dns' | 'domain_order' | 'certificate' | 'ticket'
type FaultKind = 'kill_instance' | 'crash_point' | 'dns' | 'pebble' | 'smtp' | 'redis' | 'rotate_secret'
const WRITES: readonly WriteKind[] = ['dns', 'dns', 'domain_order', 'certificate', 'ticket']
const ALL_FAULTS: readonly FaultKind[] = [
  'kill_instance',
  'crash_point',
  /** The DNS server that serves the zones (PowerDNS, or the Knot secondary) stopped and started again. */
  'dns',
  'pebble',
  'smtp',
  'redis',
  'rotate_secret',
]
/** How long a killed request's claim of its idempotency key holds the key (the retry waits it out). */
const IDEMPOTENCY_LOCK_MS = 2000

/** One acknowledged write and how to tell its effect arrived. */
interface Acked {
  kind: WriteKind
  what: string
  /** Resolves true once the effect is there. */
  arrived(): Promise<boolean>
}

/**
 * The faults of a topology's run, each once (in a seeded order): all of them with PowerDNS; with Knot those that
 * touch the way DNS reaches the secondary and the CA (the others do not depend on the DNS topology).
 */
const faultsOf = (topology: DnsTopology): readonly FaultKind[] =>
  topology === 'powerdns' ? ALL_FAULTS : ['kill_instance', 'dns', 'pebble']

// The topologies run at the same time: each is mostly waiting for its faults to end and its effects to arrive.
describe('the fault suite', { concurrency: true }, () => {
  for (const topology of TOPOLOGIES)
    describeWithEnv(['HOSTAPI_TEST_PG_URL'], `the fault suite (DNS: ${topology})`, () => {
      const missing = (topology === 'knot' ? knotMissing() : powerDnsMissing()) || pebbleMissing
      if (missing) {
        it('the fault suite', { skip: missing }, () => undefined)
        return
      }
      // The plan (faults, writes, delays) comes from the seed; which instance serves a call from a second stream.
      const rng = prng(SEED)
      const pickInstance = prng(SEED ^ 0x5bd1e995)
      const ZONE = `zone-${SEED}.com`
      let KEY = ''
      let templateId = 0
      let place: ProcessDatabase
      let pdns: PowerDns | null = null
      let knot: Knot | null = null
      /** Where the zones are served: PowerDNS, or the Knot secondary (and where pebble resolves). */
      let dnsPort: number
      /** The built-in DNS server's port of each instance (with Knot: its primaries). */
      const primaryPorts: number[] = []
      let pebble: Pebble
      let smtp: TestSmtpServer
      let smtpPort: number
      let smtpCert: { key: string; cert: string }
      let redis: OwnRedis
      let receiver: Receiver
      let dir: string
      let env: Record<string, string>
      const instances: (ServerProcess | null)[] = [null, null]
      const origins: (string | null)[] = [null, null]
      const acked: Acked[] = []
      const faults: Record<string, number> = {}
      const slowest: Record<string, number> = {}
      const kills: number[] = []
      let stranded: string[] = []
      /** What happened, in order: writes acknowledged or not, faults. */
      const log: string[] = []

      /** The secret keys every start gets: changed step by step by a rotation. */
      let keys: Record<string, string> = {}
      const startInstance = async (i: number, extra: Record<string, string> = {}) => {
        const own: Record<string, string> = topology === 'knot' ? { HOSTAPI_DNS_PORT: String(primaryPorts[i]) } : {}
        const p = spawnServer({ ...env, ...own, ...keys, ...extra })
        instances[i] = p
        const [, url] = await p.waitFor(LISTENING, 60_000)
        origins[i] = url.replace(/\/api\/v2$/, '')
      }
      const alive = () => [0, 1].filter((i) => origins[i] !== null)
      const api = (method: string, path: string, body?: unknown, on?: number) => {
        const up = alive()
        const i = on !== undefined && up.includes(on) ? on : pickInstance.pick(up)
        return request(origins[i]!, method, path, { key: KEY, ...(body === undefined ? {} : { body }) })
      }
      /** A read on whichever instance is up, retried across a kill. */
      const read = (path: string) =>
        eventually(() => api('GET', path, undefined, alive()[0]), {
          what: `GET ${path}`,
          timeoutMs: 5000,
          intervalMs: 200,
        })

      before(async () => {
        dir = tempDir()
        place = await processDatabase('postgres')
        let dnsEnv: Record<string, string>
        if (topology === 'powerdns') {
          pdns = await startPowerDns()
          dnsPort = pdns.dnsPort
          dnsEnv = {
            HOSTAPI_DNS_DRIVER: 'powerdns',
            HOSTAPI_POWERDNS_URL: pdns.url,
            HOSTAPI_POWERDNS_API_KEY: pdns.apiKey,
            HOSTAPI_POWERDNS_DNS_ADDRESS: `127.0.0.1:${pdns.dnsPort}`,
            HOSTAPI_POWERDNS_PROBE_MS: '200',
          }
        } else {
          while (primaryPorts.length < 3) {
            const port = await freePort()
            if (!primaryPorts.includes(port)) primaryPorts.push(port)
          }
          dnsPort = primaryPorts.pop()!
          dnsEnv = {
            HOSTAPI_DNS_DRIVER: 'builtin',
            HOSTAPI_DNS_SECONDARIES: `127.0.0.1:${dnsPort}`,
            HOSTAPI_DNS_CATALOG_ZONE: CATALOG,
          }
        }
        pebble = await startPebble({ dnsPort, httpPort: await freePort() })
        // Its own directory: the receiver's certificate is written under the same file names.
        fs.mkdirSync(`${dir}/smtp`)
        smtpCert = selfSignedCert(`${dir}/smtp`)
        smtp = await startSmtpServer({ cert: smtpCert })
        smtpPort = smtp.port
        redis = await OwnRedis.start()
        receiver = await startReceiver(dir)
        env = {
          ...place.env,
          HOSTAPI_PORT: '0',
          HOSTAPI_DNS_PORT: '0',
          HOSTAPI_DEMO: '0',
          HOSTAPI_SIM_SPEED: '1000000',
          HOSTAPI_JOBS: '1',
          HOSTAPI_JOB_POLL_MS: '50',
          // A job claimed by a killed instance is taken again once its lease ends (a setting from the job quarantine
          // work; ignored by a release without it, where the lease is 60 s).
          HOSTAPI_JOB_LEASE_MS: '5000',
          REDIS_URL: redis.url,
          HOSTAPI_REDIS_TIMEOUT_MS: '1000',
          ...dnsEnv,
          HOSTAPI_CA_DRIVER: 'acme',
          HOSTAPI_ACME_DIRECTORY: pebble.directoryUrl,
          HOSTAPI_ACME_EMAIL: 'hostmaster@example.com',
          HOSTAPI_ACME_CA_BUNDLE: pebble.caBundle,
          HOSTAPI_MAIL_DRIVER: 'smtp',
          HOSTAPI_SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
          HOSTAPI_SMTP_CA_FILE: smtp.caFile,
          HOSTAPI_WEBHOOKS_ALLOW_PRIVATE: '1',
          HOSTAPI_WEBHOOKS_CA_FILE: receiver.caFile,
          HOSTAPI_AVAILABILITY_RATE_LIMIT: '1000',
          HOSTAPI_IDEMPOTENCY_LOCK_MS: String(IDEMPOTENCY_LOCK_MS),
        }
        keys = { HOSTAPI_SECRET_KEY: env.HOSTAPI_SECRET_KEY }
        await startInstance(0)
        await startInstance(1)
        // The secondary knows no zone but the catalog: every zone reaches it from there.
        if (topology === 'knot') {
          const [primaryPort, other] = primaryPorts
          knot = await startKnot({ port: dnsPort, zones: [], catalog: CATALOG, primaryPort, morePrimaryPorts: [other] })
        }
        const customer = (
          await runAdminCli(env, 'account', 'create', '--name', 'Fault B.V.', '--email', 'owner@fault.example')
        ).out.trim()
        KEY = (await runAdminCli(env, 'key', 'create', '--account', customer)).out.trim()
        const hook = await api('POST', '/account/webhooks', { url: `${receiver.origin}/events`, events: ['*'] }, 0)
        assert.equal(hook.status, 200, hook.text)
        const contact = await api(
          'POST',
          '/domains/contacts',
          {
            ...contactProfile,
            profile: { ...contactProfile.profile, defaults: { owner: true, admin: true, tech: true, billing: true } },
          },
          0,
        )
        assert.equal(contact.status, 200, contact.text)
        const tpl = await api(
          'POST',
          '/domains/dns-templates',
          { alias: 'web', records: [{ type: 'A', name: '', value: '192.0.2.80' }] },
          0,
        )
        assert.equal(tpl.status, 200, tpl.text)
        templateId = tpl.body.data.id
        // The customer's zone, served by PowerDNS, that the DNS changes and certificates of the traffic use.
        const zone = await api(
          'POST',
          '/domains/order',
          { domain: ZONE, type: 'register', dns_template_id: templateId },
          0,
        )
        assert.equal(zone.status, 200, zone.text)
        await eventually(
          async () => ((await queryUdp(dnsPort, ZONE, 'A', { timeoutMs: 500 })).answers ?? []).length > 0,
          {
            what: `${ZONE} served by ${topology}`,
            intervalMs: 100,
          },
        ).catch((err: Error) => assert.fail(`${err.message}${knot ? `:\n${knot.output()}` : ''}`))
      })

      after(async () => {
        for (const p of instances) p?.child.kill('SIGKILL')
        await Promise.all(instances.map((p) => p?.exited))
        await pebble?.close()
        await pdns?.close()
        await knot?.close()
        await smtp?.close()
        await redis?.kill()
        await receiver?.close()
        await place?.remove()
        if (dir) fs.rmSync(dir, { recursive: true, force: true })
      })

      /** What each kind of write asks for, and the effect it expects once acknowledged. */
      const write = async (kind: WriteKind, n: number, on?: number): Promise<void> => {
        if (kind === 'dns') {
          const name = `s${SEED}-${n}`
          const value = `v-${SEED}-${n}`
          const r = await api('PATCH', `/domains/${ZONE}/dns`, { record: { type: 'TXT', name, value, ttl: 300 } }, on)
          if (r.status !== 200) return
          const nth = ++dnsWrites
          acked.push({
            kind,
            what: `TXT ${name}.${ZONE} = ${value} on ${topology}`,
            arrived: async () =>
              txtOf(await queryUdp(dnsPort, `${name}.${ZONE}`, 'TXT', { timeoutMs: 500 })).includes(value),
          })
          // The event has only the zone's name: as many dns.zone.changed events arrived as changes were acknowledged.
          acked.push({
            kind,
            what: `the ${nth}th dns.zone.changed of ${ZONE} at the receiver (for ${name})`,
            arrived: async () => events('dns.zone.changed', (d) => d.domain === ZONE).length >= nth,
          })
        } else if (kind === 'domain_order') {
          const domain = `f${SEED}-${n}.com`
          const r = await api('POST', '/domains/order', { domain, type: 'register', dns_template_id: templateId }, on)
          if (r.status !== 200) return
          ackOrder(r.body.data.order_id as number, domain)
        } else if (kind === 'certificate') {
          const r = await api('POST', '/certificates/order', { product_id: 1, duration: 1 }, on)
          if (r.status !== 200) return
          const orderId = r.body.data.order_id as number
          const state = { certificateId: 0, requested: false }
          // Once the order made the certificate, the customer requests it (the request is acknowledged or asked again).
          const requested = async () => {
            if (!state.certificateId) {
              const o = await read(`/orders/${orderId}`)
              const id = o.body.data?.services?.[0]?.result?.certificate_id as number | undefined
              if (!id) return false
              state.certificateId = id
            }
            if (!state.requested) {
              const body = { csr: opensslCsr(ZONE, [ZONE]), validation_method: 'dns', auto_setup_dns: true }
              const q = await api('POST', `/certificates/${state.certificateId}/request`, body, on).catch(() => null)
              if (q?.status !== 200) return false
              state.requested = true
            }
            return true
          }
          acked.push({
            kind,
            what: `certificate order ${orderId} made a certificate, requested and ACT, certificate.issued at the receiver`,
            arrived: async () =>
              (await requested()) &&
              (await read(`/certificates/${state.certificateId}`)).body.data?.certificate_status === 'ACT' &&
              events('certificate.issued', (d) => d.id === state.certificateId).length > 0,
          })
          await eventually(requested, { what: 'the certificate requested', timeoutMs: 5000, intervalMs: 100 }).catch(
            () => undefined,
          )
        } else {
          const ticket = { subject: `fault ${SEED}-${n}`, message: 'Please help', department: 'support' }
          const r = await api('POST', '/account/tickets/', ticket, on)
          if (r.status !== 200) return
          const nr = r.body.data.ticket_number as number
          acked.push({
            kind,
            what: `mail of ticket #${nr} at the SMTP server`,
            arrived: async () => smtp.received.some((m) => String(m.parsed.subject).includes(`[Ticket #${nr}]`)),
          })
        }
      }

      /** The events of `type` the receiver got (each webhook-id once) whose data `match` accepts. */
      const events = (type: string, match: (data: Record<string, unknown>) => boolean) => {
        const ids = new Set<string>()
        for (const m of receiver.received) {
          const body = JSON.parse(m.body) as { type: string; data: Record<string, unknown> }
          if (body.type === type && match(body.data)) ids.add(m.headers['webhook-id'])
        }
        return [...ids]
      }
      let dnsWrites = 0

      /** An acknowledged domain order: completed, the domain active, domain.order.completed at the receiver. */
      const ackOrder = (orderId: number, domain: string) =>
        acked.push({
          kind: 'domain_order',
          what: `order ${orderId} of ${domain} completed, domain active, domain.order.completed at the receiver`,
          arrived: async () => {
            const o = await read(`/orders/${orderId}`)
            if (o.body.data?.status !== 'completed') return false
            if ((await read(`/domains/${domain}`)).body.data?.status !== 'active') return false
            return events('domain.order.completed', (d) => d.order_id === orderId).length > 0
          },
        })

      /**
       * A domain order on instance `i`, armed to kill itself at `point` (HOSTAPI_CRASH_AT): the request dies with the
       * process; the customer sends it again, with the same idempotency key, to the other instance.
       */
      const crashedOrder = async (i: number, point: string, n: number) => {
        const domain = `c${SEED}-${n}.com`
        const body = { domain, type: 'register', dns_template_id: templateId }
        const headers = { 'idempotency-key': `order-${domain}` }
        const first = await request(origins[i]!, 'POST', '/domains/order', { key: KEY, body, headers }).catch(
          () => null,
        )
        const exited = await instances[i]!.exited
        const killedAt = Date.now()
        kills.push(killedAt)
        origins[i] = null
        log.push(`${point}: ${first ? `answered ${first.status}` : 'no answer'}, ${exited.signal}`)
        assert.equal(exited.signal, 'SIGKILL', `the instance armed at ${point} died there`)
        // Once the dead request's claim of the key is older than the lock age, the retry is taken.
        const again = await eventually(
          async () => {
            const r = await request(origins[1 - i]!, 'POST', '/domains/order', { key: KEY, body, headers })
            assert.notEqual(r.status, 409, r.text)
            return r
          },
          { what: `the retry of the order of ${domain}`, timeoutMs: IDEMPOTENCY_LOCK_MS + 30_000, intervalMs: 250 },
        )
        if (again.status === 200) return ackOrder(again.body.data.order_id as number, domain)
        // The first request's order was committed before the kill: the retry is refused as a duplicate; it completes.
        assert.match(
          again.text,
          /already in an open order|already registered|not available for registration/,
          `retry after ${point}`,
        )
        const [row] = await rawRows(place.database, `select order_id from order_items where name = '${domain}'`)
        ackOrder(Number(row.order_id), domain)
      }

      /** Stops instance `i` (SIGTERM, as a deploy does) and starts it again with the current keys. */
      const restartInstance = async (i: number) => {
        const p = instances[i]!
        origins[i] = null
        p.child.kill('SIGTERM')
        await p.exited
        await startInstance(i)
      }

      /**
       * The rotation of the secret key in docs/security.md, each step a rolling restart with writes in between: the new key as
       * NEXT; the new key, the old as PREVIOUS; `admin secrets rotate`; the new key alone.
       */
      const rotateSecret = async (kinds: WriteKind[], next: () => number) => {
        const old = keys.HOSTAPI_SECRET_KEY
        const fresh = randomBytes(32).toString('base64')
        const steps: Record<string, string>[] = [
          { HOSTAPI_SECRET_KEY: old, HOSTAPI_SECRET_KEY_NEXT: fresh },
          { HOSTAPI_SECRET_KEY: fresh, HOSTAPI_SECRET_KEY_PREVIOUS: old },
          { HOSTAPI_SECRET_KEY: fresh },
        ]
        for (const [s, step] of steps.entries()) {
          if (s === 2) {
            const out = await runAdminCli({ ...env, ...keys }, 'secrets', 'rotate')
            log.push(`secrets rotate: ${out.err.trim().split('\n').at(-1)}`)
          }
          keys = step
          for (const i of [0, 1]) {
            await restartInstance(i)
            // A write while one instance is on the new settings and the other not yet.
            await write(kinds[i], next()).catch(() => undefined)
          }
        }
      }

      // The whole plan drawn from the seed up front: each fault kind in turn (a seeded order), each with its writes.
      const faultOrder = [...faultsOf(topology)]
      for (let i = faultOrder.length - 1; i > 0; i--) {
        const j = rng.int(i + 1)
        ;[faultOrder[i], faultOrder[j]] = [faultOrder[j], faultOrder[i]]
      }
      const plan = Array.from({ length: Number(process.env.FAULT_ROUNDS ?? faultOrder.length) }, (_, round) => ({
        fault: faultOrder[round % faultOrder.length],
        victim: rng.int(2),
        before: [rng.pick(WRITES), rng.pick(WRITES)],
        cut: rng.pick(WRITES),
        cutAfterMs: rng.int(400),
        during: [rng.pick(WRITES), rng.pick(WRITES)],
        downMs: rng.int(1000),
        crashAt: rng.pick(ORDER_CRASH_POINTS),
      }))

      /** Stops a back end (or kills an instance), returns the function that ends the fault. */
      const inject = async (step: (typeof plan)[number], next: () => number): Promise<() => Promise<void>> => {
        const { fault, victim } = step
        faults[fault] = (faults[fault] ?? 0) + 1
        if (fault === 'crash_point') {
          // The victim starts again armed (in sandbox mode, which HOSTAPI_CRASH_AT needs); its next order kills it.
          const p = instances[victim]!
          origins[victim] = null
          p.child.kill('SIGKILL')
          await p.exited
          await startInstance(victim, { HOSTAPI_SANDBOX: '1', HOSTAPI_CRASH_AT: step.crashAt })
          await crashedOrder(victim, step.crashAt, next())
          return () => startInstance(victim)
        }
        if (fault === 'rotate_secret') {
          await rotateSecret(step.during, next)
          return async () => undefined
        }
        if (fault === 'kill_instance') {
          const i = victim
          const p = instances[i]!
          origins[i] = null
          p.child.kill('SIGKILL')
          await p.exited
          kills.push(Date.now())
          return () => startInstance(i)
        }
        if (fault === 'dns') {
          const server = (pdns ?? knot)!
          await server.stop()
          return () => server.start()
        }
        if (fault === 'pebble') {
          // pebble forgets every account and order when it starts again.
          await pebble.restart()
          return async () => undefined
        }
        if (fault === 'smtp') {
          const received = smtp.received
          await smtp.close()
          return async () => {
            smtp = await startSmtpServer({ port: smtpPort, cert: smtpCert })
            smtp.received.unshift(...received)
          }
        }
        await redis.kill()
        return () => redis.start()
      }

      /** Waits until every acknowledged effect arrived; the time it took, or fails naming what is missing. */
      const converge = async (): Promise<number> => {
        const start = Date.now()
        const pending = new Set(acked)
        let last = ''
        const arrived = async () => {
          for (const a of [...pending])
            if (await a.arrived().catch(() => false)) {
              pending.delete(a)
              last = `${a.kind} ${a.what}`
            }
          return pending.size === 0
        }
        await eventually(arrived, { what: 'every acknowledged effect', timeoutMs: BOUND_MS, intervalMs: 250 }).catch(
          async () =>
            assert.fail(
              `seed ${SEED}: ${pending.size} acknowledged writes without effect ${BOUND_MS} ms after the fault ended:\n` +
                [...pending].map((a) => `  ${a.kind}: ${a.what}`).join('\n') +
                `\nunfinished: ${(await strandedWork()).join('; ')}\nfaults: ${log.join(', ')}`,
            ),
        )
        log.push(`converged in ${Date.now() - start} ms, last: ${last}`)
        return Date.now() - start
      }

      it(`keeps every acknowledged write through the injected faults (FAULT_SEED=${SEED})`, {
        timeout: 420_000,
      }, async (t) => {
        t.diagnostic(`FAULT_SEED=${SEED}`)
        let n = 0
        try {
          for (const step of plan) {
            const { fault, victim } = step
            // Writes before the fault; the last one (on the victim when an instance is killed) is cut at a random point.
            for (const kind of step.before) await write(kind, n++).catch(() => undefined)
            const inFlight = write(step.cut, n++, victim).catch(() => undefined)
            await pace(step.cutAfterMs)
            log.push(`${fault}${fault === 'kill_instance' ? victim : ''} ${step.cutAfterMs}ms into ${step.cut}`)
            const end = await inject(step, () => n++)
            await inFlight
            // Writes while the back end is down (the instances acknowledge what they have committed).
            for (const kind of step.during) await write(kind, n++).catch(() => undefined)
            await pace(step.downMs)
            await end()
            const took = await converge()
            slowest[fault] = Math.max(slowest[fault] ?? 0, took)
          }
          // Work of a write whose answer was lost (committed, not acknowledged) may still be under way: it gets the bound.
          const nothingStranded = async () => {
            stranded = await strandedWork()
            return stranded.length === 0
          }
          await eventually(nothingStranded, {
            what: 'no stranded work',
            timeoutMs: BOUND_MS,
            intervalMs: 500,
          }).catch(() => undefined)
          assert.deepEqual(stranded, [], `seed ${SEED}: stranded work`)
          const repeats = duplicates()
          assert.deepEqual(repeats, [], `seed ${SEED}: events delivered more than once without a kill in between`)
        } finally {
          const kinds = Object.entries(faults).map(([k, v]) => `${k}=${v}`)
          const slow = Object.entries(slowest).map(([k, v]) => `${k}=${v}ms`)
          console.log(
            `fault suite seed=${SEED}: faults ${kinds.join(' ')}; acknowledged writes checked ${acked.length}; ` +
              `stranded ${stranded.length}; slowest convergence ${slow.join(' ')}`,
            ...(process.env.FAULT_VERBOSE ? [`\n${log.join('\n')}`] : []),
          )
        }
      })

      /** Work left unfinished after convergence: orders, certificates, jobs, webhook events never delivered. */
      async function strandedWork(): Promise<string[]> {
        const db = place.database
        const out: string[] = []
        const orders =
          "select o.id, o.status, i.name, i.errors from orders o join order_items i on i.order_id = o.id where o.status <> 'completed'"
        for (const r of await rawRows(db, orders)) out.push(`order ${r.id} of ${r.name} ${r.status}: ${r.errors}`)
        for (const r of await rawRows(db, "select id, status, status_message from certificates where status = 'PEN'"))
          out.push(`certificate ${r.id} PEN: ${r.status_message}`)
        const now = new Date().toISOString()
        const overdue = new Date(Date.now() - 5000).toISOString()
        const jobs =
          "select id, kind, status, attempts, last_error, run_at, locked_until from jobs where status in ('queued', 'running', 'failed')"
        for (const r of await rawRows(db, jobs)) {
          // A running job whose lease is still renewed is at work (the resync every start queues), not stranded.
          const alive = r.status === 'running' && String(r.locked_until) >= now
          if (!alive && (r.status === 'failed' || String(r.run_at) < overdue || Number(r.attempts) > 0))
            out.push(`job ${r.id} ${r.kind} ${r.status} (${r.attempts} attempts: ${r.last_error})`)
        }
        const uids = new Set(receiver.received.map((m) => m.headers['webhook-id']))
        const deliveries =
          'select e.uid, d.status, d.attempts, d.parked, d.next_attempt_at, d.locked_until, d.error_detail from webhook_deliveries d join webhook_events e on e.id = d.event_id'
        const deliveryOf = new Map((await rawRows(db, deliveries)).map((d) => [String(d.uid), d]))
        for (const r of await rawRows(db, 'select uid, type from webhook_events'))
          if (!uids.has(String(r.uid)))
            out.push(
              `webhook event ${r.uid} ${r.type} not delivered (${JSON.stringify(deliveryOf.get(String(r.uid)))})`,
            )
        const subjects = new Set(smtp.received.map((m) => String(m.parsed.subject)))
        // An invoice whose issue the request did not get to (killed after the commit) waits for its job, due later.
        const waiting = (await rawRows(db, "select payload, run_at from jobs where status = 'queued'")).filter(
          (r) => String(r.run_at) > now,
        )
        for (const r of await rawRows(db, 'select id, invoice_nr from invoices'))
          if (waiting.some((j) => String(j.payload).includes(`"invoiceId":${r.id}`))) continue
          else if (!subjects.has(`Invoice ${r.invoice_nr}`))
            out.push(`mail of invoice ${r.invoice_nr} not delivered (received: ${[...subjects].join(', ')})`)
        return out
      }

      /** webhook-ids that arrived twice with no instance killed between the two arrivals. */
      function duplicates(): string[] {
        const seen = new Map<string, number>()
        const out: string[] = []
        for (const m of receiver.received) {
          const id = m.headers['webhook-id']
          const first = seen.get(id)
          if (first === undefined) seen.set(id, m.at)
          else if (!kills.some((k) => k >= first - 1000 && k <= m.at)) out.push(id)
        }
        return out
      }
    })
})
