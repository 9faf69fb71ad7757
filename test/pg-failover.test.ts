import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import pg from 'pg'
import { request, TEST_SECRET_KEY, tempDir, type Reply } from './helpers/app.js'
import { pgClusterMissing, startPgCluster, type PgCluster } from './helpers/pg-cluster.js'
import { originOf, spawnServer, type ServerProcess } from './helpers/process.js'
import { DeadlineError, eventually, pace, withDeadline } from './helpers/wait.js'

/** A request not answered within this time is a hang, and fails the test. */
const CLIENT_TIMEOUT_MS = 8000
const CLIENTS = 4
const KEY = 'pgFailoverDemoKey000000001'

interface Outcome {
  client: number
  subject: string
  sentAt: number
  at: number
  status: number | 'hang' | 'error'
  retryAfter?: string
  text?: string
  ticketNumber?: number
}

/** The request, or 'hang' when no answer came within CLIENT_TIMEOUT_MS. */
function within(p: Promise<Reply>): Promise<Reply | 'hang'> {
  return withDeadline(p, CLIENT_TIMEOUT_MS, 'the answer').catch((err) => {
    if (err instanceof DeadlineError) return 'hang' as const
    throw err
  })
}

// The primary PostgreSQL dies while a few clients write through hostapi; the standby, which has every commit the
// primary acknowledged (synchronous replication), is promoted and HAProxy moves the address to it. hostapi answers
// 503 with Retry-After while no primary is reachable (never a 500, never a hang), serves again within seconds of the
// promotion, and every write it acknowledged is on the new primary.
const missing = pgClusterMissing()
describe('a PostgreSQL failover behind HAProxy', { skip: missing || undefined }, () => {
  let cluster: PgCluster
  let server: ServerProcess
  let origin: string
  const dataDir = tempDir()

  before(async () => {
    cluster = await startPgCluster()
    const admin = new pg.Client({ connectionString: cluster.primary.url() })
    await admin.connect()
    await admin.query('create database hostapi')
    await admin.end()
    const env = {
      PATH: process.env.PATH ?? '',
      HOSTAPI_DATA_DIR: dataDir,
      HOSTAPI_LOG_LEVEL: 'warn',
      HOSTAPI_SECRET_KEY: TEST_SECRET_KEY,
      DATABASE_URL: `postgres://postgres@127.0.0.1:${cluster.proxyPort}/hostapi`,
      // The demo account with a known key: no admin command to wait for.
      HOSTAPI_DEMO_KEY: KEY,
      HOSTAPI_PORT: '0',
      HOSTAPI_DNS_PORT: '0',
      HOSTAPI_JOB_POLL_MS: '100',
      HOSTAPI_RATE_LIMIT: '100000',
      HOSTAPI_DB_CONNECT_TIMEOUT_MS: '1000',
    }
    server = spawnServer(env)
    origin = await originOf(server)
  })

  after(async () => {
    server?.child.kill('SIGTERM')
    await server?.exited
    await cluster?.close()
    fs.rmSync(dataDir, { recursive: true, force: true })
  })

  it('answers 503 with Retry-After during the failover and loses no acknowledged write', async () => {
    const outcomes: Outcome[] = []
    let stop = false
    const client = async (n: number) => {
      for (let i = 0; !stop; i++) {
        const subject = `failover c${n} w${i}`
        const sentAt = Date.now()
        const reply = await within(
          request(origin, 'POST', '/account/tickets', {
            key: KEY,
            body: { subject, message: `write ${i} of client ${n}`, department: 'support' },
          }),
        ).catch(() => 'error' as const)
        const o: Outcome = { client: n, subject, sentAt, at: Date.now(), status: 'error' }
        if (reply === 'hang' || reply === 'error') o.status = reply
        else {
          o.status = reply.status
          o.text = reply.text
          o.retryAfter = reply.headers['retry-after'] as string | undefined
          if (reply.status === 200) o.ticketNumber = reply.body.data.ticket_number
        }
        outcomes.push(o)
        // A hang is a failure already; the client does not pile more requests on it.
        if (o.status === 'hang') return
        await pace(o.status === 200 ? 10 : 100)
      }
    }
    let before = 0
    let killedAt = 0
    let promotedAt = 0
    const clients = Array.from({ length: CLIENTS }, (_, n) => client(n))
    try {
      // Traffic first settles (the first requests of a fresh process are slow), then runs a while.
      const ok = () => outcomes.filter((o) => o.status === 200).length
      await eventually(() => ok() >= 10, { what: '10 writes answered', timeoutMs: 60_000, intervalMs: 100 }).catch(
        () => undefined,
      )
      const settled = ok()
      await eventually(() => ok() >= settled + 40, {
        what: '40 more writes',
        timeoutMs: 20_000,
        intervalMs: 100,
      }).catch(() => undefined)
      before = outcomes.filter((o) => o.status === 200).length
      assert.ok(before > 0, `writes succeed before the failover: ${JSON.stringify(outcomes.slice(-3))}`)
      killedAt = Date.now()
      cluster.kill(cluster.primary)
      // The outage: nothing takes writes until the standby is promoted.
      await pace(4000)
      promotedAt = Date.now()
      await cluster.promote()
      await cluster.routedTo(cluster.standby)
      const after = () => outcomes.filter((o) => o.status === 200 && o.sentAt > promotedAt).length
      await eventually(() => after() > 0, {
        what: 'a write after the promotion',
        timeoutMs: 20_000,
        intervalMs: 100,
      }).catch(() => undefined)
      await eventually(() => after() >= 40, {
        what: '40 writes after the promotion',
        timeoutMs: 20_000,
        intervalMs: 100,
      }).catch(() => undefined)
    } finally {
      stop = true
      await Promise.all(clients)
    }

    const served = outcomes.filter((o) => o.status === 200)
    const unavailable = outcomes.filter((o) => o.status === 503)
    const other = outcomes.filter((o) => o.status !== 200 && o.status !== 503)
    const firstAfter = served.find((o) => o.sentAt > promotedAt)
    const last503 = unavailable.at(-1)
    const first503 = unavailable[0]

    // Every write answered 200 is on the new primary, with the ticket number it was answered with.
    const db = new pg.Client({ connectionString: cluster.standby.url('hostapi') })
    await db.connect()
    const { rows } = await db.query<{ subject: string; ticket_number: number }>(
      "select subject, ticket_number from tickets where subject like 'failover %'",
    )
    const found = new Map(rows.map((r) => [r.subject, Number(r.ticket_number)]))
    const lost = served.filter((o) => found.get(o.subject) !== o.ticketNumber)
    // The job runner lived through the outage: the mail of tickets written after the promotion is sent.
    let jobsAfter = 0
    await eventually(
      async () => {
        const done = await db.query<{ n: number }>(
          "select count(*)::int as n from jobs where status = 'done' and finished_at > $1",
          [new Date(promotedAt).toISOString()],
        )
        jobsAfter = done.rows[0].n
        return jobsAfter > 0
      },
      { what: 'a job done after the promotion', timeoutMs: 10_000, intervalMs: 100 },
    ).catch(() => undefined)
    await db.end()

    const late = unavailable.filter((o) => firstAfter && o.sentAt > firstAfter.at)
    const seconds = (ms: number) => (ms / 1000).toFixed(1)
    console.log(
      `failover: ${served.length} writes acknowledged (${before} before the kill), ` +
        `${served.length - lost.length} of them found on the new primary, ` +
        `${unavailable.length} answers 503 over ${first503 && last503 ? seconds(last503.at - first503.sentAt) : 0} s ` +
        `(killed at +0 s, promoted at +${seconds(promotedAt - killedAt)} s; ${late.length} after the first 200), ` +
        `first 200 ${firstAfter ? seconds(firstAfter.at - promotedAt) : '-'} s after the promotion; ` +
        `${jobsAfter} jobs done after it`,
    )
    assert.equal(server.child.exitCode, null, `hostapi is still running: ${server.stderr().slice(-3000)}`)
    assert.deepEqual(
      [...new Set(other.map((o) => `${o.status} ${o.text ?? ''}`.slice(0, 300)))],
      [],
      'no answer but 200 and 503, no hang, no dropped connection',
    )
    assert.ok(unavailable.length > 0, 'the outage is answered 503')
    for (const o of unavailable) assert.match(o.retryAfter ?? '', /^[1-9]\d*$/, `503 with Retry-After: ${o.text}`)
    assert.ok(firstAfter, 'hostapi serves again after the promotion')
    assert.ok(firstAfter.at - promotedAt < 15_000, 'within seconds of the promotion')
    assert.deepEqual(
      lost.map((o) => o.subject),
      [],
      'every acknowledged write is on the new primary',
    )
    assert.ok(jobsAfter > 0, 'the job runner works again after the failover')
  })
})
