import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import net from 'node:net'
import { forEachDialect, processDatabase, request, type ProcessDatabase } from './helpers/app.js'
import { cli, lineText, spawnServer, type ServerProcess } from './helpers/process.js'
import { eventually, withDeadline } from './helpers/wait.js'

// `hostapi serve --workers 2`: two processes on one port behave as one server.
const KEY = 'workersDemoKey00000000001'
const ZONE = 'demo-shop.nl'
const RATE = 100
const AUTH_FAILS = 8
// A fresh connection per request, so the primary hands each to a worker in turn.
const fresh = { connection: 'close' }

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** The pids of the processes whose request log lines answered `path` (JSON lines on stdout carry pino's pid). */
function servedBy(server: ServerProcess, method: string, path: string): number[] {
  return server.lines
    .filter((l) => l.startsWith('{') && lineText(l).startsWith(`${method} ${path} `))
    .map((l) => (JSON.parse(l) as { pid: number }).pid)
}

/**
 * `serve --workers 2` on `place`, without sandbox, its lines at info. The per-address cap counts per worker, and the
 * primary hands connections out in turn, not by load: a burst of connections could pass one worker's cap, so it is off.
 */
const twoWorkers = (place: ProcessDatabase): Record<string, string> => ({
  ...place.env,
  HOSTAPI_PORT: '0',
  HOSTAPI_DNS_PORT: '0',
  HOSTAPI_DEMO_KEY: KEY,
  HOSTAPI_SANDBOX: '0',
  HOSTAPI_WORKERS: '2',
  HOSTAPI_LOG_LEVEL: 'info',
  HOSTAPI_MAX_CONNECTIONS_PER_IP: '0',
})

forEachDialect((dialect) => {
  describe(`serve --workers 2 (${dialect})`, () => {
    let place: ProcessDatabase
    let server: ServerProcess
    let origin: string
    let pids: number[]
    let subUserKey: string
    let adminToken: string

    before(async () => {
      place = await processDatabase(dialect)
      server = spawnServer({
        ...twoWorkers(place),
        HOSTAPI_RATE_LIMIT: String(RATE),
        HOSTAPI_AUTH_FAIL_LIMIT: String(AUTH_FAILS),
      })
      // Three processes start one after another on a machine the other suites keep busy.
      await server.waitFor(/^2 workers serving/, 240_000)
      pids = (await server.fact(/^2 workers serving/, 'pids')) as number[]
      origin = (await server.waitFor(/^hostapi listening on (https:\/\/\S+)/))[1].replace(/\/api\/v2$/, '')
      subUserKey = (await server.fact(/^Demo sub-user API key/, 'key')) as string
      adminToken = (await server.fact(/^Demo admin token/, 'token')) as string
    })
    after(async () => {
      server?.child.kill('SIGKILL')
      for (const pid of pids ?? []) if (alive(pid)) process.kill(pid, 'SIGKILL')
      await place?.remove()
    })

    it('runs two worker processes besides the primary', () => {
      assert.equal(pids.length, 2)
      assert.ok(!pids.includes(server.child.pid ?? 0), 'the workers are not the primary')
      for (const pid of pids) assert.ok(alive(pid), `worker ${pid} runs`)
    })

    it('allows exactly the per-key rate limit across the workers, and requests reach both', async () => {
      const replies = await Promise.all(
        Array.from({ length: RATE + 6 }, () => request(origin, 'GET', '/whoami', { key: KEY, headers: fresh })),
      )
      const statuses = replies.map((r) => r.status)
      assert.equal(statuses.filter((s) => s === 200).length, RATE, `statuses: ${statuses.join(' ')}`)
      assert.equal(statuses.filter((s) => s === 429).length, 6)
      await eventually(() => servedBy(server, 'GET', '/api/v2/whoami').length >= RATE + 6, {
        what: 'the request log lines',
        timeoutMs: 10_000,
      })
      assert.deepEqual(new Set(servedBy(server, 'GET', '/api/v2/whoami')), new Set(pids), 'both workers answered')
    })

    it('reports the whole server in the metrics, whichever worker answers the scrape', async () => {
      for (let i = 0; i < 4; i++) {
        const r = await request(origin, 'GET', '/admin/v1/metrics', {
          headers: { ...fresh, authorization: `Bearer ${adminToken}` },
        })
        assert.equal(r.status, 200, r.text)
        const answered = r.text
          .split('\n')
          .filter((l) => l.startsWith('hostapi_http_requests_total{') && /operation="whoami"/.test(l))
        const count = (status: string) =>
          answered.filter((l) => l.includes(`status="${status}"`)).reduce((n, l) => n + Number(l.split(' ').pop()), 0)
        assert.equal(count('200'), RATE, answered.join('\n'))
        assert.equal(count('429'), 6, answered.join('\n'))
        assert.equal(
          r.text.match(/^hostapi_build_info\{[^}]*\} (\S+)$/m)?.[1],
          '1',
          'a gauge of the release is taken once',
        )
      }
    })

    it('answers a read after a write with the write, whichever worker served either', async () => {
      for (let i = 0; i < 8; i++) {
        const value = `workers-${i}`
        const w = await request(origin, 'PATCH', `/api/v2/domains/${ZONE}/dns`, {
          key: subUserKey,
          headers: fresh,
          body: { record: { type: 'TXT', name: 'wr', value, ttl: 300 } },
        })
        assert.equal(w.status, 200, w.text)
        const r = await request(origin, 'GET', `/api/v2/domains/${ZONE}/dns`, { key: subUserKey, headers: fresh })
        assert.equal(r.status, 200, r.text)
        const records = r.body.data.records as { type: string; name: string; value: string }[]
        const txt = records.filter((x) => x.type === 'TXT' && x.name === `wr.${ZONE}.`).map((x) => x.value)
        assert.deepEqual(txt, [value], `read ${i} after its write`)
      }
      // Fresh connections go to the workers in turn: the writes and the reads were served by both.
      const path = `/api/v2/domains/${ZONE}/dns`
      assert.deepEqual(new Set([...servedBy(server, 'PATCH', path), ...servedBy(server, 'GET', path)]), new Set(pids))
    })

    it('takes concurrent writes through both workers without a locked database', async () => {
      const replies = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          request(origin, 'PATCH', `/api/v2/domains/${ZONE}/dns`, {
            key: subUserKey,
            headers: fresh,
            body: { record: { type: 'TXT', name: `c${i}`, value: `concurrent-${i}`, ttl: 300 } },
          }),
        ),
      )
      assert.deepEqual(
        replies.filter((r) => r.status !== 200).map((r) => `${r.status} ${r.text}`),
        [],
      )
    })

    it('throttles failed credentials of one address across the workers (then every keyed request of it)', async () => {
      // One after another (a check and its count are two steps), each on a connection of its own.
      const statuses: number[] = []
      for (let i = 0; i < AUTH_FAILS + 4; i++)
        statuses.push(
          (await request(origin, 'GET', '/whoami', { key: `wrongKey${i}0000000000000000`, headers: fresh })).status,
        )
      assert.equal(statuses.filter((s) => s === 401).length, AUTH_FAILS, `statuses: ${statuses.join(' ')}`)
      assert.equal(statuses.filter((s) => s === 429).length, 4)
    })

    it('replaces a killed worker while the port keeps answering', async () => {
      const [killed, survivor] = pids as [number, number]
      process.kill(killed, 'SIGKILL')
      // A connection handed to the worker in the instant it died dies with it; once the primary knows, none is.
      await server.waitFor(/^worker ended: starting another$/)
      for (let i = 0; i < 6; i++) {
        const r = await request(origin, 'GET', '/healthz', { headers: fresh })
        assert.equal(r.status, 200)
      }
      await server.waitFor(/^worker serving$/, 120_000)
      const replacement = (await server.fact(/^worker serving$/, 'workerPid')) as number
      assert.ok(![killed, survivor].includes(replacement), 'a new process serves')
      assert.ok(alive(replacement))
      pids = [survivor, replacement]
    })

    it('stops every worker on SIGTERM to the primary, with status 0', async () => {
      server.child.kill('SIGTERM')
      const { code } = await withDeadline(server.exited, 60_000, 'the primary to exit')
      assert.equal(code, 0)
      for (const pid of pids) assert.ok(!alive(pid), `worker ${pid} ended`)
    })
  })
})

/**
 * Whether `pid` has ended: gone, or a zombie its parent has not reaped yet whose every thread has ended too (the
 * main thread is a zombie before the others are done; the channel closes with the last of them).
 */
const ended = (pid: number) => {
  try {
    const state = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '')
    return state.startsWith('Z') && fs.readdirSync(`/proc/${pid}/task`).length === 1
  } catch {
    return true
  }
}

describe('serve --workers 2: a worker dies between its asks and the answers', () => {
  it('the primary survives, keeps serving through the other worker and replaces the dead one', async () => {
    const place = await processDatabase('sqlite')
    const hook = new URL('./helpers/worker-dies-after-asking.ts', import.meta.url).href
    const server = spawnServer(twoWorkers(place), {
      argv: [process.execPath, '--import', 'tsx', '--import', hook, cli, 'serve'],
    })
    const primary = server.child.pid ?? 0
    const started: number[] = []
    try {
      await server.waitFor(/^2 workers serving/, 240_000)
      const [victim, survivor] = (await server.fact(/^2 workers serving/, 'pids')) as [number, number]
      started.push(victim, survivor)
      const origin = (await server.waitFor(/^hostapi listening on (https:\/\/\S+)/))[1].replace(/\/api\/v2$/, '')
      // The primary stopped, the worker asks for a count and the metrics and dies: when the primary goes on, the asks
      // wait in its channel, whose other end is closed, and each answer is a send on it.
      process.kill(primary, 'SIGSTOP')
      try {
        process.kill(victim, 'SIGUSR2')
        await eventually(() => ended(victim), { what: 'the worker to die after asking', timeoutMs: 30_000 })
      } finally {
        process.kill(primary, 'SIGCONT')
      }
      await server.waitFor(/^worker ended: starting another$/, 30_000)
      // Killed by itself once both asks were written (SIGUSR2 alone would have ended a worker without the hook).
      assert.equal(await server.fact(/^worker ended: starting another$/, 'signal'), 'SIGKILL')
      for (let i = 0; i < 6; i++)
        assert.equal((await request(origin, 'GET', '/whoami', { key: KEY, headers: fresh })).status, 200)
      await server.waitFor(/^worker serving$/, 120_000)
      const replacement = (await server.fact(/^worker serving$/, 'workerPid')) as number
      started.push(replacement)
      assert.ok(![victim, survivor].includes(replacement) && alive(replacement), 'a new worker serves')
      assert.ok(alive(primary) && alive(survivor), 'the primary and the other worker still run')
      // The answers to the dead worker were dropped by the send's callback, not raised as the worker's 'error'.
      const said = server.lines.map(lineText)
      assert.deepEqual(
        said.filter((l) => /worker channel error/.test(l)),
        [],
      )
      server.child.kill('SIGTERM')
      const { code } = await withDeadline(server.exited, 60_000, 'the primary to exit')
      assert.equal(code, 0, server.stderr())
    } finally {
      if (alive(primary)) server.child.kill('SIGKILL')
      for (const pid of started) if (alive(pid)) process.kill(pid, 'SIGKILL')
      await place.remove()
    }
  })
})

describe('serve --workers 2 in sandbox mode', () => {
  it('runs one process and says why', async () => {
    const place = await processDatabase('sqlite')
    const server = spawnServer({
      ...place.env,
      HOSTAPI_PORT: '0',
      HOSTAPI_DNS_PORT: '0',
      HOSTAPI_DEMO_KEY: KEY,
      HOSTAPI_WORKERS: '2',
      HOSTAPI_LOG_LEVEL: 'info',
    })
    try {
      await server.waitFor(/^one worker instead of 2: sandbox mode/, 120_000)
      const origin = (await server.waitFor(/^hostapi listening on (https:\/\/\S+)/))[1].replace(/\/api\/v2$/, '')
      for (let i = 0; i < 4; i++)
        assert.equal((await request(origin, 'GET', '/whoami', { key: KEY, headers: fresh })).status, 200)
      await eventually(() => servedBy(server, 'GET', '/api/v2/whoami').length >= 4, {
        what: 'the request log lines',
        timeoutMs: 10_000,
      })
      assert.deepEqual(new Set(servedBy(server, 'GET', '/api/v2/whoami')), new Set([server.child.pid]))
      assert.ok(!server.lines.some((l) => /workers serving/.test(lineText(l))))
    } finally {
      server.child.kill('SIGTERM')
      await server.exited
      await place.remove()
    }
  })
})

describe('serve --workers 2 on a port in use', () => {
  it('says why once and exits with the status one process has (2)', async () => {
    const place = await processDatabase('sqlite')
    const taken = net.createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    const port = (taken.address() as net.AddressInfo).port
    try {
      const server = spawnServer({
        ...place.env,
        HOSTAPI_PORT: String(port),
        HOSTAPI_DNS_PORT: '0',
        HOSTAPI_SANDBOX: '0',
        HOSTAPI_WORKERS: '2',
      })
      const { code } = await withDeadline(server.exited, 120_000, 'the primary to exit')
      assert.equal(code, 2)
      assert.match(server.startError(), new RegExp(`^Port ${port} is already in use`))
    } finally {
      taken.close()
      await place.remove()
    }
  })
})
