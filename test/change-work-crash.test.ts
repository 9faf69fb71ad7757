// A change and the work it causes commit in one transaction, for every kind of work. The job kinds are read from the
// job runner; each is recurring (caused by time), queued at start, or caused by a change, and then a flow below
// causes it over HTTPS against a server process that kills itself (SIGKILL) right after the change's commit. After a
// restart the change, its job and the job's effect all exist (a kill before the commit leaves nothing, which the
// database's own rollback guarantees). A new job kind fails this test until its flow is added.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import { sql, type Kysely } from 'kysely'
import { openDatabase } from '../src/db/database.js'
import type { DB } from '../src/db/tables.js'
import { CRASH_POINTS, type CrashPoint } from '../src/ops/crash-points.js'
import { forEachDialect, processDatabase, request, startTestApp, tempDir } from './helpers/app.js'
import { queryUdp } from './helpers/dns.js'
import { powerDnsMissing, startPowerDns, type PowerDns } from './helpers/powerdns.js'
import { crashAndRestart, crashableServerEnv, type ServerProcess } from './helpers/process.js'
import { eventually } from './helpers/wait.js'
import { startReceiver, type Receiver } from './helpers/webhook-receiver.js'

const KEY = 'changeWorkCrashDemoKey00001'
const ADMIN = 'adm_changeWorkCrashAdmin0001'
const ZONE = 'demo-blog.com'

/** What a flow works with: the restarted server and the database. */
interface Run {
  origin: string
  db: Kysely<DB>
  pdns: PowerDns
  receiver: Receiver
  /** A name unique to this run. */
  tag: string
  /** Jobs with a higher id were queued by the flow (or later). */
  jobsBefore: number
  /** The request id of the flow's last call: the call whose process was killed. */
  lastRequest: string
  api(method: string, path: string, body?: unknown): ReturnType<typeof request>
}

interface Flow {
  /** The job kinds the change causes. */
  kinds: string[]
  point: CrashPoint
  /** What the change needs, made on the armed process before the change. */
  prepare?(run: Run): Promise<Record<string, unknown>>
  /** Makes the change over HTTPS (the request may die with its process). */
  cause(run: Run, prepared: Record<string, unknown>): Promise<unknown>
  /** After the restart: whether the change was committed. */
  committed(run: Run, prepared: Record<string, unknown>): Promise<boolean>
  /** Whether the work the change caused has been done (polled). */
  done(run: Run, prepared: Record<string, unknown>): Promise<boolean>
}

const count = async (q: { executeTakeFirst(): Promise<{ n: unknown } | undefined> }) =>
  Number((await q.executeTakeFirst())?.n ?? 0)
/** Jobs of `kind` queued by the flow, or (a keyed job, queued once) waiting already. */
const jobOf = (run: Run, kind: string) =>
  count(
    run.db
      .selectFrom('jobs')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('kind', '=', kind)
      .where((eb) =>
        eb.or([eb('id', '>', run.jobsBefore), eb.and([eb('key', 'is not', null), eb('status', '=', 'queued')])]),
      ),
  )
/** Moves the sandbox clock of the server on: an invoice is issued by its job a few minutes after its order. */
const advance = async (run: Run, body: { advance: string } | { to: string }) => {
  const moved = await request(run.origin, 'POST', '/admin/v1/sandbox/clock', {
    headers: { authorization: `Bearer ${ADMIN}` },
    body,
  })
  assert.equal(moved.status, 200, moved.text)
}
const vpsId = async (run: Run, hostname: string) =>
  (await run.db.selectFrom('vps').select('id').where('hostname', '=', hostname).executeTakeFirstOrThrow()).id
const orderDomain = (run: Run, domain: string) => run.api('POST', '/api/v2/domains/order', { domain })
const orderOf = async (run: Run, domain: string) =>
  run.db
    .selectFrom('order_items as i')
    .innerJoin('orders as o', 'o.id', 'i.order_id')
    .select(['o.id', 'o.status'])
    .where('i.name', '=', domain)
    .executeTakeFirst()

/** The flows, by the crash point after their change's commit. */
const FLOWS: Record<string, Flow> = {
  'a DNS record written (pushed to PowerDNS, its event delivered)': {
    kinds: ['dns.push', 'webhooks.deliver'],
    point: 'dns.change.committed',
    cause: (run) =>
      run.api('PATCH', `/api/v2/domains/${ZONE}/dns`, {
        record: { type: 'TXT', name: run.tag, value: `v-${run.tag}`, ttl: 300 },
      }),
    committed: async (run) =>
      (await count(
        run.db
          .selectFrom('dns_records')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('name', '=', `${run.tag}.${ZONE}`),
      )) === 1,
    done: async (run) => {
      const answer = await queryUdp(run.pdns.dnsPort, `${run.tag}.${ZONE}`, 'TXT', { timeoutMs: 500 }).catch(() => null)
      const pushed = (answer?.answers ?? []).length > 0
      const delivered = run.receiver.received.some((m) => m.body.includes('dns.zone.changed'))
      return pushed && delivered
    },
  },
  'a ticket opened (its mails sent)': {
    kinds: ['mail.send'],
    point: 'tickets.create.committed',
    cause: (run) =>
      run.api('POST', '/api/v2/account/tickets', { subject: run.tag, message: 'Help', department: 'support' }),
    committed: async (run) =>
      (await count(
        run.db
          .selectFrom('tickets')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('subject', '=', run.tag),
      )) === 1,
    done: async (run) =>
      (await count(
        run.db
          .selectFrom('outbox')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('subject', 'like', `%${run.tag}`),
      )) >= 1,
  },
  'a domain ordered (the order processed, its invoice issued)': {
    kinds: ['orders.process', 'invoices.issue'],
    point: 'orders.create.committed',
    cause: (run) => orderDomain(run, `${run.tag}.com`),
    committed: async (run) => (await orderOf(run, `${run.tag}.com`)) !== undefined,
    done: async (run) => {
      const order = await orderOf(run, `${run.tag}.com`)
      const invoice = await run.db
        .selectFrom('invoices')
        .select('payment_reference')
        .where('order_id', '=', order!.id)
        .executeTakeFirst()
      if (!invoice?.payment_reference) await advance(run, { advance: '10m' })
      return order!.status === 'completed' && !!invoice?.payment_reference
    },
  },
  "an invoice issued (its mail sent, the payments' reconciliation queued)": {
    kinds: ['invoices.reconcile', 'mail.send'],
    point: 'invoices.issue.committed',
    cause: (run) => orderDomain(run, `${run.tag}.com`),
    committed: async (run) => {
      const order = await orderOf(run, `${run.tag}.com`)
      if (!order) return false
      const invoice = await run.db
        .selectFrom('invoices')
        .select('payment_reference')
        .where('order_id', '=', order.id)
        .executeTakeFirst()
      return !!invoice?.payment_reference
    },
    done: async (run) => {
      const invoice = await run.db
        .selectFrom('invoices')
        .select('invoice_nr')
        .where('order_id', '=', (await orderOf(run, `${run.tag}.com`))!.id)
        .executeTakeFirstOrThrow()
      const mails = await count(
        run.db
          .selectFrom('outbox')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('subject', '=', `Invoice ${invoice.invoice_nr}`),
      )
      const reconcile = await count(
        run.db
          .selectFrom('jobs')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('key', '=', 'invoices.reconcile')
          .where('status', '=', 'queued'),
      )
      return mails === 1 && reconcile === 1
    },
  },
  'a domain created by its order (its zone served, its renewal queued)': {
    kinds: ['domains.renew'],
    point: 'domains.order.committed',
    // The order is answered; its job makes the domain and kills the process.
    cause: (run) => orderDomain(run, `${run.tag}.com`),
    committed: async (run) =>
      (await run.db.selectFrom('domains').select('id').where('name', '=', `${run.tag}.com`).executeTakeFirst()) !==
      undefined,
    done: async (run) => {
      const d = await run.db
        .selectFrom('domains')
        .select(['id', 'renewal_date'])
        .where('name', '=', `${run.tag}.com`)
        .executeTakeFirstOrThrow()
      const renewal = await run.db
        .selectFrom('jobs')
        .select('run_at')
        .where('kind', '=', 'domains.renew')
        .where('payload', '=', JSON.stringify({ domainId: d.id }))
        .executeTakeFirst()
      const served = await queryUdp(run.pdns.dnsPort, `${run.tag}.com`, 'SOA', { timeoutMs: 500 }).catch(() => null)
      return renewal?.run_at.slice(0, 10) === d.renewal_date && (served?.answers ?? []).length > 0
    },
  },
  'a domain cancelled (it ends at its renewal date)': {
    kinds: ['domains.end'],
    point: 'domains.cancel.committed',
    cause: (run) => run.api('DELETE', '/api/v2/domains/demo-mail.eu'),
    committed: async (run) =>
      (await run.db.selectFrom('domains').select('cancel_at').where('name', '=', 'demo-mail.eu').executeTakeFirst())
        ?.cancel_at != null,
    done: async (run) => {
      const d = await run.db
        .selectFrom('domains')
        .select('renewal_date')
        .where('name', '=', 'demo-mail.eu')
        .executeTakeFirst()
      if (d) await advance(run, { to: `${d.renewal_date}T01:00:00.000Z` })
      return d === undefined
    },
  },
  'a VPS cancelled (it ends at the end of its term)': {
    kinds: ['vps.expire'],
    point: 'vps.cancel.committed',
    cause: async (run) => run.api('DELETE', `/api/v2/vps/${await vpsId(run, 'db1.demo.example')}`),
    committed: async (run) =>
      (
        await run.db.selectFrom('vps').select('cancellation_date').where('hostname', '=', 'db1.demo.example').execute()
      )[0].cancellation_date !== null,
    done: async (run) => {
      const v = await run.db
        .selectFrom('vps')
        .select(['status', 'cancellation_date'])
        .where('hostname', '=', 'db1.demo.example')
        .executeTakeFirstOrThrow()
      if (v.status === 'terminated') return true
      // Its term ends during that day: the day after it.
      await advance(run, { to: new Date(Date.parse(v.cancellation_date!) + 86_400_000).toISOString() })
      return false
    },
  },
  'a VPS restarted (its task run)': {
    kinds: ['vps.task'],
    point: 'vps.task.committed',
    cause: async (run) => run.api('POST', `/api/v2/vps/${await vpsId(run, 'web1.demo.example')}/restart`),
    committed: async (run) =>
      (await count(
        run.db
          .selectFrom('vps_tasks')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('action', '=', 'restart'),
      )) === 1,
    done: async (run) =>
      (await run.db.selectFrom('vps_tasks').select('status').where('action', '=', 'restart').executeTakeFirstOrThrow())
        .status === 'done',
  },
  'a certificate requested (its validation checked, the certificate issued)': {
    kinds: ['certificates.issue'],
    point: 'certificates.request.committed',
    prepare: async (run) => {
      const order = await run.api('POST', '/api/v2/certificates/order', { product_id: 1, duration: 1 })
      assert.equal(order.status, 200, order.text)
      let id = 0
      await eventually(
        async () => {
          const row = await run.db
            .selectFrom('certificates')
            .select('id')
            .where('status', '=', 'NEW')
            .executeTakeFirst()
          id = row?.id ?? 0
          return id > 0
        },
        { what: 'the certificate package is made' },
      )
      const csr = await run.api('POST', '/api/v2/certificates/csr', {
        common_name: `www.${ZONE}`,
        organization: 'Example B.V.',
        email: 'admin@example.com',
        country: 'NL',
        state: 'Noord-Holland',
        locality: 'Amsterdam',
      })
      assert.equal(csr.status, 200, csr.text)
      return { id, csr: csr.body.data.csr }
    },
    cause: (run, p) =>
      run.api('POST', `/api/v2/certificates/${p.id}/request`, {
        csr: p.csr,
        validation_method: 'dns',
        auto_setup_dns: true,
      }),
    committed: async (run, p) =>
      (
        await run.db
          .selectFrom('certificates')
          .select('status')
          .where('id', '=', Number(p.id))
          .executeTakeFirstOrThrow()
      ).status !== 'NEW',
    done: async (run, p) =>
      (
        await run.db
          .selectFrom('certificates')
          .select('status')
          .where('id', '=', Number(p.id))
          .executeTakeFirstOrThrow()
      ).status === 'ACT',
  },
}

/** Kinds queued when an instance starts (keyed: one however many start), not by a change. */
const AT_START = ['dns.resync']

describe('every job kind is recurring, queued at start, or caused by a change with a flow here', () => {
  it('has a flow for each kind a change causes, at a crash point that exists', async () => {
    const t = await startTestApp('sqlite', { env: { HOSTAPI_JOBS: '1' } })
    try {
      const { kinds, recurring } = t.ctx.jobs
      assert.ok(kinds.length > 0 && recurring.length > 0, 'the runner reports its kinds')
      const flowed = new Set(Object.values(FLOWS).flatMap((f) => f.kinds))
      const missing = kinds.filter((k) => !recurring.includes(k) && !AT_START.includes(k) && !flowed.has(k))
      assert.deepEqual(missing, [], 'job kinds no change flow covers: add one to FLOWS')
      for (const f of Object.values(FLOWS)) {
        assert.ok(CRASH_POINTS.includes(f.point))
        for (const k of f.kinds) assert.ok(kinds.includes(k), `${k} is a registered kind`)
      }
    } finally {
      await t.close()
    }
  })
})

const skip = powerDnsMissing()
forEachDialect((dialect) => {
  describe(`a change and its work survive a kill right after the commit (${dialect})`, { skip }, () => {
    let pdns: PowerDns
    let receiver: Receiver
    let dir: string
    before(async () => {
      dir = tempDir()
      pdns = await startPowerDns()
      receiver = await startReceiver(dir)
    })
    after(async () => {
      await receiver?.close()
      await pdns?.close()
      fs.rmSync(dir, { recursive: true, force: true })
    })

    for (const [name, flow] of Object.entries(FLOWS)) {
      it(`${name}: killed at ${flow.point}`, async () => {
        const place = await processDatabase(dialect)
        const env = {
          ...crashableServerEnv(place, KEY, ADMIN),
          HOSTAPI_SIM_SPEED: '1000000',
          HOSTAPI_DNS_DRIVER: 'powerdns',
          HOSTAPI_POWERDNS_URL: pdns.url,
          HOSTAPI_POWERDNS_API_KEY: pdns.apiKey,
          HOSTAPI_POWERDNS_DNS_ADDRESS: `127.0.0.1:${pdns.dnsPort}`,
          HOSTAPI_POWERDNS_PROBE_MS: '200',
          HOSTAPI_WEBHOOKS_CA_FILE: receiver.caFile,
        }
        const database = openDatabase(place.database)
        const run: Run = {
          origin: '',
          db: database.db,
          pdns,
          receiver,
          tag: `cw-${flow.point.replace(/\./g, '-')}-${Date.now()}`,
          jobsBefore: 0,
          lastRequest: '',
          api: (method, path, body) => {
            run.lastRequest = `${run.tag}-${randomUUID()}`
            return request(run.origin, method, path, { key: KEY, body, headers: { 'x-request-id': run.lastRequest } })
          },
        }
        let server: ServerProcess | null = null
        try {
          // The armed process seeds the demo account at its start; the endpoint made there hears every event.
          let prepared: Record<string, unknown> = {}
          const restarted = await crashAndRestart(env, flow.point, async (origin) => {
            run.origin = origin
            const hook = await run.api('POST', '/api/v2/account/webhooks', {
              url: `${receiver.origin}/events`,
              events: ['*'],
            })
            assert.equal(hook.status, 200, hook.text)
            prepared = (await flow.prepare?.(run)) ?? {}
            receiver.received.length = 0
            const last = await sql<{ n: number | null }>`select max(id) as n from jobs`.execute(database.db)
            run.jobsBefore = Number(last.rows[0].n ?? 0)
            return flow.cause(run, prepared)
          })
          server = restarted.server
          run.origin = restarted.origin
          // Killed after the commit: the change is there, so its jobs must be, and their work must get done.
          assert.ok(await flow.committed(run, prepared), 'the change was committed before the kill')
          // The call's audit row commits with its change, whatever the area.
          const audited = await database.db
            .selectFrom('audit_log')
            .select(['method', 'status'])
            .where('request_id', '=', run.lastRequest)
            .execute()
          assert.deepEqual(
            audited,
            [{ method: audited[0]?.method, status: 200 }],
            'the change committed without its audit row',
          )
          for (const kind of flow.kinds)
            assert.ok((await jobOf(run, kind)) > 0, `the change committed without its ${kind} job`)
          await eventually(() => flow.done(run, prepared), { what: `the work of ${name} is done`, timeoutMs: 60_000 })
        } finally {
          server?.child.kill('SIGTERM')
          await server?.exited
          await database.close()
          await place.remove()
        }
      })
    }
  })
})
