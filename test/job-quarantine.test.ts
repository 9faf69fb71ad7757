import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { forEachDialect, processDatabase, rawRows, request } from './helpers/app.js'
import { spawnServer } from './helpers/process.js'
import { eventually, withDeadline } from './helpers/wait.js'

const KEY = 'jobQuarantineDemoKey00000001'
const TOKEN = 'adm_jobQuarantineToken000001'
const LISTENING = /^hostapi listening on (https:\/\/\S+)/
// Queued at every start, due at once: the job the sandbox makes end its process.
const KIND = 'maintenance.prune'

/** How the process ended, failing the test when it runs on for `ms`. */
async function ended(server: ReturnType<typeof spawnServer>, ms = 90_000): Promise<NodeJS.Signals | null> {
  const { signal } = await withDeadline(server.exited, ms, 'the process ends').catch((err: Error) => {
    throw new Error(`${err.message}: ${server.lines.join('\n')}`)
  })
  return signal
}

// A job that ends its process whenever it runs cannot keep the instances restarting: after its process died during
// two attempts, it is quarantined instead of being run a third time.
forEachDialect((dialect) => {
  describe(`a job that kills its process is quarantined (${dialect})`, () => {
    it('dies twice, then the third start quarantines the job and serves', async () => {
      const place = await processDatabase(dialect)
      const env = {
        ...place.env,
        HOSTAPI_PORT: '0',
        HOSTAPI_DNS_PORT: '0',
        HOSTAPI_DEMO_KEY: KEY,
        HOSTAPI_ADMIN_TOKEN: TOKEN,
        HOSTAPI_JOB_POLL_MS: '50',
        HOSTAPI_JOB_LEASE_MS: '1500',
        HOSTAPI_SANDBOX_CRASH_JOB: KIND,
      }
      const job = async () =>
        (await rawRows(place.database, `select id, status, crashes from jobs where kind = '${KIND}' order by id`)) as {
          id: number
          status: string
          crashes: number
        }[]
      const third = { server: null as ReturnType<typeof spawnServer> | null }
      try {
        // Start 1: the job's first attempt ends the process; the job is left running, with its lease.
        const first = spawnServer(env)
        assert.equal(await ended(first), 'SIGKILL', first.stderr())
        const [left] = await job()
        assert.deepEqual([left.status, Number(left.crashes)], ['running', 0])

        // Start 2: once the lease ran out the job is taken again as abandoned (one crash), and kills again.
        const second = spawnServer(env)
        assert.equal(await ended(second), 'SIGKILL', second.stderr())
        const [again] = await job()
        assert.deepEqual([again.id, again.status, Number(again.crashes)], [left.id, 'running', 1])

        // Start 3: the job is quarantined without running, and the instance serves.
        const server = spawnServer(env)
        third.server = server
        const [, url] = await server.waitFor(LISTENING, 90_000)
        const origin = url.replace(/\/api\/v2$/, '')
        const admin = (path: string) => request(origin, 'GET', path, { headers: { authorization: `Bearer ${TOKEN}` } })
        const failed = await eventually(
          async () => {
            const r = await admin(`/admin/v1/jobs/${left.id}`)
            assert.equal(r.status, 200, r.text)
            return r.body.data.status === 'failed' && r.body.data
          },
          { what: 'the job is quarantined', timeoutMs: 20_000 },
        )
        assert.equal(failed.kind, KIND)
        assert.equal(failed.crashes, 2)
        assert.match(failed.last_error, /^quarantined: its process died during 2 attempts/)
        const list = await admin('/admin/v1/jobs?status=failed&limit=100')
        const quarantined = list.body.data.jobs.filter((j: { last_error: string | null }) =>
          j.last_error?.startsWith('quarantined:'),
        )
        assert.deepEqual(
          quarantined.map((j: { id: number; crashes: number }) => [j.id, j.crashes]),
          [[left.id, 2]],
          'only the job that killed its process is quarantined',
        )
        const metrics = (await admin('/admin/v1/metrics')).text
        assert.match(metrics, new RegExp(`^hostapi_jobs_quarantined\\{kind="${KIND}"\\} 1$`, 'm'))
        assert.equal([...metrics.matchAll(/^hostapi_jobs_quarantined\{/gm)].length, 1)
        const served = await request(origin, 'GET', '/api/v2/domains', { key: KEY })
        assert.equal(served.status, 200, served.text)
        assert.equal(server.child.exitCode, null, 'the third start is still running')

        // The next run of the recurring job is queued under its key already: a retry of the quarantined one is refused.
        const refused = await request(origin, 'POST', `/admin/v1/jobs/${left.id}/retry`, {
          headers: { authorization: `Bearer ${TOKEN}` },
        })
        assert.equal(refused.status, 400, refused.text)
        assert.equal(
          refused.body.status_description,
          `A job of the same key (every:${KIND}) is queued already: it does this job's work`,
        )
      } finally {
        third.server?.child.kill('SIGKILL')
        await third.server?.exited
        await place.remove()
      }
    })
  })
})
