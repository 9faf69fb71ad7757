import net from 'node:net'
import { after, before, it } from 'node:test'
import assert from 'node:assert/strict'
import { describeWithEnv, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { twoInstances } from './helpers/instances.js'
import { contactProfile, makeDomain, uniqueName } from './helpers/fixtures/domains.js'
import { makeVps } from './helpers/fixtures/vps.js'
import { openDatabase } from '../src/db/database.js'
import type { Config } from '../src/config/config.js'
import { eventually, later } from './helpers/wait.js'

/** A TCP proxy to the PostgreSQL server of `database` that holds each of the server's answers back `delayMs`. */
async function slowAnswers(database: Config['database'], delayMs: number) {
  if (database.dialect !== 'postgres') throw new Error('PostgreSQL only')
  const target = new URL(database.url)
  let answered = 0
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname)
    for (const s of [client, upstream]) s.on('error', () => undefined)
    client.pipe(upstream)
    upstream.on('data', () => answered++)
    upstream.on('data', (chunk) => later(delayMs, () => client.write(chunk)))
    upstream.on('end', () => later(delayMs, () => client.end()))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = new URL(database.url)
  url.hostname = '127.0.0.1'
  url.port = String((server.address() as net.AddressInfo).port)
  return {
    database: { ...database, url: url.toString() },
    /** How many chunks of the server's answers it has received so far (each then held back `delayMs`). */
    answered: () => answered,
    /** Resolves once every connection through it is closed. */
    close: () => new Promise((resolve) => server.close(resolve)),
  }
}

const txtValues = (r: { body: { data: { records: { type: string; name: string; value: string }[] } } }) =>
  r.body.data.records.filter((x) => x.type === 'TXT' && x.name.startsWith('_acme-challenge.')).map((x) => x.value)

describeWithEnv(
  ['HOSTAPI_TEST_PG_URL'],
  'the response cache on PostgreSQL: a read that starts after a write was answered sees it, on any instance',
  () => {
    let one: TestApp
    let two: TestApp
    // A third instance without a response cache: what the data says now.
    let truth: TestApp
    let close: () => Promise<void>
    let a: TestAccount
    let token: string
    const admin = (app: TestApp, method: string, path: string, body?: unknown) =>
      app.request(method, `/admin/v1${path}`, { body, headers: { authorization: `Bearer ${token}` } })

    before(async () => {
      ;({ one, two, close } = await twoInstances())
      truth = await startTestApp('postgres', { env: { HOSTAPI_RESPONSE_CACHE_MB: '0' }, shareDatabaseWith: one })
      a = await one.account('Cache across instances')
      token = (await one.ctx.services.admin.createToken('test')).token
    })
    after(async () => {
      await truth.close()
      await close()
    })

    it('200 times: a DNS change on one instance, then the zone read on the other, never the old records', async () => {
      const zone = await makeDomain(one, a, uniqueName('loop'))
      const url = `/domains/${zone}/dns`
      let stale = 0
      for (let i = 0; i < 200; i++) {
        const [writer, reader] = i % 2 ? [two, one] : [one, two]
        const value = `loop-${i}`
        const patched = await writer.request('PATCH', url, {
          key: a.key,
          body: { record: { type: 'TXT', name: '_acme-challenge', value, ttl: 120 } },
        })
        assert.equal(patched.status, 200)
        const seen = txtValues(await reader.request('GET', url, { key: a.key }))
        if (seen.length !== 1 || seen[0] !== value) stale++
        // Served again from the reader's cache: still the current answer.
        assert.deepEqual(txtValues(await reader.request('GET', url, { key: a.key })), [value])
      }
      assert.equal(stale, 0)
    })

    it('cached reads arriving together share one version query; one started after a write sees it', async () => {
      // An account of its own: its few hundred requests stay clear of the other tests' rate limit.
      const b = await one.account('Batched version reads')
      const zone = await makeDomain(one, b, uniqueName('batch'))
      const url = `/domains/${zone}/dns`
      const burst = (n: number) => Promise.all(Array.from({ length: n }, () => two.request('GET', url, { key: b.key })))
      // Opens the connections and fills the cache and the key lookup cache.
      await burst(20)
      await burst(20)
      const before = two.ctx.roundTrips()
      const answers = await burst(20)
      assert.ok(answers.every((r) => r.status === 200))
      const roundTrips = two.ctx.roundTrips() - before
      assert.ok(roundTrips < 10, `20 cached reads sent together cost ${roundTrips} round trips`)

      // Reads keep arriving on `two` all along, so a version query is nearly always on its way when a read starts:
      // a read that started after a write was answered must not be given a version read before that write.
      let running = true
      const background = (async () => {
        for (let n = 0; running && n < 50; n++) await burst(3)
      })()
      let stale = 0
      try {
        for (let i = 0; i < 30; i++) {
          const value = `batch-${i}`
          const patched = await one.request('PATCH', url, {
            key: b.key,
            body: { record: { type: 'TXT', name: '_acme-challenge', value, ttl: 120 } },
          })
          assert.equal(patched.status, 200)
          for (const r of await burst(5)) if (txtValues(r).join() !== value) stale++
        }
      } finally {
        running = false
        await background
      }
      assert.equal(stale, 0)
    })

    it('a version query on its way when a write is answered is not shared by a reading asked for after it', async () => {
      const zone = await makeDomain(one, a, uniqueName('slow'))
      // The database's answers reach this connection 400 ms late, so its version query, answered by the server, is
      // still on its way when a write made then on another connection has been answered.
      const proxy = await slowAnswers(one.config.database, 400)
      const slow = openDatabase(proxy.database)
      try {
        await slow.accountVersion!(a.accountId)
        const asked = proxy.answered()
        const early = slow.accountVersion!(a.accountId)
        // The server has answered it (before the write below): the answer is held back in the proxy.
        await eventually(() => proxy.answered() > asked, {
          what: 'the server answers the version query',
          intervalMs: 5,
        })
        const sent = slow.roundTrips()
        await one.ctx.db.updateTable('domains').set({ tags: '["slow"]' }).where('name', '=', zone).execute()
        const late = slow.accountVersion!(a.accountId)
        const [before, after] = await Promise.all([early, late])
        assert.equal(slow.roundTrips(), sent + 1, 'the later reading sent a query of its own')
        assert.notEqual(after, before)
        assert.equal(after, await one.ctx.accountVersion!(a.accountId))
      } finally {
        await slow.close()
        await proxy.close()
      }
    })

    it('writes by a job run through the admin API and by the admin API itself show on the other instance', async () => {
      const vps = await makeVps(one, a, { settle: true })
      const ticket = (
        await one.request('POST', '/account/tickets', {
          key: a.key,
          body: { subject: 'Cache', message: 'first', department: 'sales' },
        })
      ).body.data.ticket_number
      for (let i = 0; i < 10; i++) {
        const action = i % 2 ? 'start' : 'stop'
        assert.equal((await one.request('GET', '/vps', { key: a.key })).status, 200)
        assert.equal((await two.request('POST', `/vps/${vps}/${action}`, { key: a.key })).status, 200)
        assert.equal((await admin(two, 'POST', '/jobs/run')).status, 200)
        const shown = (await one.request('GET', '/vps', { key: a.key })).body.data.vps.find(
          (v: { id: number }) => v.id === vps,
        )
        assert.equal(shown.status, action === 'stop' ? 'stopped' : 'running')

        const thread = `/account/tickets/${ticket}`
        assert.equal((await one.request('GET', thread, { key: a.key })).status, 200)
        assert.equal((await admin(two, 'POST', `/tickets/${ticket}/reply`, { message: `answer ${i}` })).status, 200)
        const messages = (await one.request('GET', thread, { key: a.key })).body.data.thread
        assert.match(messages.at(-1).body, new RegExp(`answer ${i}`))
      }
    })

    it('every write that changes a cacheable answer shows at once on both instances', async () => {
      const zone = await makeDomain(one, a, uniqueName('paths'))
      const vps = await makeVps(one, a, { settle: true })
      const contact = (await one.request('POST', '/domains/contacts', { key: a.key, body: contactProfile })).body.data
      let ticket = 0
      // The answer to `url` is cached on both instances, `change` is made, and both answer what the data says.
      const fresh = async (url: string, what: string, change: () => Promise<unknown>) => {
        const before = (await truth.request('GET', url, { key: a.key })).text
        for (const app of [one, two, one, two]) await app.request('GET', url, { key: a.key })
        await change()
        const now = (await truth.request('GET', url, { key: a.key })).text
        assert.notEqual(now, before, `${what} changes ${url}`)
        for (const app of [one, two]) assert.equal((await app.request('GET', url, { key: a.key })).text, now, what)
      }
      const api = (app: TestApp, method: string, path: string, body?: unknown) => async () => {
        const r = await app.request(method, path, { key: a.key, body })
        assert.equal(r.status, 200, `${method} ${path}: ${r.text}`)
        return r
      }
      const dns = `/domains/${zone}/dns`
      const record = (value: string | null) => ({ record: { type: 'TXT', name: 'w', value, ttl: 300 } })
      for (const url of [dns, `${dns}/zone`]) {
        await fresh(url, 'PATCH', api(one, 'PATCH', dns, record('patched')))
        await fresh(url, 'PATCH null', api(two, 'PATCH', dns, record(null)))
        await fresh(url, 'PUT', api(one, 'PUT', dns, { records: [{ type: 'A', name: 'www', value: '192.0.2.7' }] }))
        await fresh(url, 'DELETE', api(two, 'DELETE', dns, { record: { type: 'A', name: 'www' } }))
        await fresh(url, 'zone import', api(one, 'PUT', `${dns}/zone`, { zone: `mx 300 IN TXT "${url.length}"\n` }))
      }
      await fresh('/domains', 'a new domain', () => makeDomain(two, a, uniqueName('paths')))
      await fresh('/domains', 'tags', api(two, 'PUT', `/domains/${zone}`, { tags: ['cached'] }))
      const locked = (await truth.request('GET', `/domains/${zone}`, { key: a.key })).body.data.is_locked
      await fresh(`/domains/${zone}`, 'lock', api(two, 'PUT', `/domains/${zone}`, { is_locked: !locked }))
      await fresh(`/domains/${zone}`, 'owner', api(one, 'PUT', `/domains/${zone}`, { profile: { owner: contact.id } }))
      await fresh(
        `/domains/${zone}`,
        'contact renamed',
        api(two, 'PUT', `/domains/contacts/${contact.id}`, { name: 'Piet Jansen' }),
      )
      await fresh('/domains', 'another process', async () => {
        const other = openDatabase(one.config.database)
        try {
          await other.db.updateTable('domains').set({ tags: '["elsewhere"]' }).where('name', '=', zone).execute()
        } finally {
          await other.close()
        }
      })
      await fresh('/domains', 'cancellation', api(one, 'DELETE', `/domains/${zone}`))
      const tickets = '/account/tickets/?page=1&limit=25'
      await fresh(tickets, 'a new ticket', async () => {
        const r = await api(two, 'POST', '/account/tickets', { subject: 'S', message: 'm', department: 'sales' })()
        ticket = r.body.data.ticket_number
      })
      await fresh(
        `/account/tickets/${ticket}`,
        'reply',
        api(one, 'POST', `/account/tickets/${ticket}/reply`, { message: 'r' }),
      )
      await fresh(`/account/tickets/${ticket}`, 'support reply', () =>
        admin(two, 'POST', `/tickets/${ticket}/reply`, { message: 'support' }),
      )
      await fresh(tickets, 'closed by support', () => admin(one, 'PUT', `/tickets/${ticket}/close`))
      await fresh('/vps', 'hostname', api(one, 'PUT', `/vps/${vps}/hostname`, { hostname: 'renamed.example.com' }))
      await fresh('/vps', 'stop, run by a job', async () => {
        await api(two, 'POST', `/vps/${vps}/stop`)()
        await one.ctx.jobs.drain()
      })
    })
  },
)
