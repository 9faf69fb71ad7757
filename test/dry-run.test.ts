import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { sql } from 'kysely'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { fixtures, type FixtureResult } from './helpers/fixtures.js'
import { contactProfile, makeDomain, uniqueName } from './helpers/fixtures/domains.js'
import { makeVps } from './helpers/fixtures/vps.js'
import type { OutboxMailDriver } from '../src/drivers/mail/builtin.js'
import type { RecordSelector } from '../src/modules/domains/dns/dns.service.js'
import { API_PREFIX } from '../src/http/constants.js'
import type { RouteEntry } from '../src/http/route-table.js'

// Generated from the route table: every mutating customer route takes `?test=1`, answers as usual for a
// valid call by the resource's owner, and leaves every table as it was. A new mutating route without a
// dry run fails here.

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/** The audit trail records every call by design. (Every call sends an Idempotency-Key, so idempotency_keys is watched.) */
const UNWATCHED = new Set(['audit_log'])
/** Columns that record any call by design: an API key notes when and from where it was last used (at most once a minute). */
const CALL_BOOKKEEPING: Record<string, string[]> = { api_keys: ['last_used_at', 'last_used_ip'] }

const ED25519 = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBfDqf9/tkQWdrGtyE3T2lSmcFThZGcJ7ZOPUjmYl/VU dry'

const csrBody = (commonName: string) => ({
  common_name: commonName,
  organization: 'Example B.V.',
  email: 'admin@example.com',
  country: 'NL',
  state: 'Noord-Holland',
  locality: 'Amsterdam',
})

const fullProfile = {
  firstname: 'Jan',
  lastname: 'Jansen',
  address: 'Stationsstraat',
  house_number: '12a',
  zipcode: '1234 ab',
  city: 'Amsterdam',
  country_code: 'nl',
  phone: '201234567',
  phone_country_code: '+31',
}

/** What a dry-run call needs beyond the route's fixture: a valid body, other path parameters. */
interface DryRunCall {
  body?: unknown
  params?: Record<string, string>
}

type Setup = (t: TestApp, owner: TestAccount, f: FixtureResult) => Promise<DryRunCall> | DryRunCall

/**
 * Routes whose fixture gives no body (no path parameters) or a body that only passes schema validation (all the
 * security cases need), or whose resource must first be brought into the state the call acts on. Setups may
 * change the database: the snapshot is taken after them.
 */
const setups: Record<string, Setup> = {
  // Domains area.
  'PUT /api/v2/domains/:domain/cancel-delete': async (t, owner, f) => {
    await t.ctx.services.domains.cancel(owner.accountId, f.params.domain)
    return {}
  },
  // The fixture's record exists, so a delete that was not a dry run would show.
  'DELETE /api/v2/domains/:domain/dns': async (t, owner, f) => {
    await t.ctx.services.dns.patch(owner.accountId, f.params.domain, (f.body as { record: RecordSelector }).record)
    return {}
  },
  'POST /api/v2/domains/contacts': () => ({ body: contactProfile }),
  'POST /api/v2/domains/nameservers': () => ({
    body: { alias: 'dry-ns', nameservers: ['ns1.example.net', 'ns2.example.net'], set_as_default: 1 },
  }),
  'POST /api/v2/domains/dns-templates': () => ({
    body: { alias: 'dry', default: 1, records: [{ type: 'A', name: 'www', value: '192.0.2.1' }] },
  }),
  'POST /api/v2/domains/order': () => ({ body: { domain: uniqueName('dry', 'com') } }),
  'PUT /api/v2/orders/:order_id': async (t, owner, f) => {
    const { items } = await t.ctx.services.orders.get(owner.accountId, Number(f.params.order_id))
    return { body: { cart_id: items[0].id, hosting: { domain: 'example.nl' } } }
  },
  // Certificates.
  'POST /api/v2/certificates/order': () => ({ body: { product_id: 1, duration: 1 } }),
  // Generates a key and a CSR and stores nothing, dry run or not.
  'POST /api/v2/certificates/csr': () => ({ body: csrBody('www.example.com') }),
  'POST /api/v2/certificates/:id/request': async (t, owner) => {
    const gen = await t.request('POST', '/certificates/csr', { key: owner.key, body: csrBody('shop.example.com') })
    assert.equal(gen.status, 200, gen.text)
    return { body: { csr: gen.body.data.csr, validation_method: 'http' } }
  },
  // Account.
  'PUT /api/v2/account/profile': () => ({ body: { ...fullProfile, email: 'dry-new@example.org' } }),
  'POST /api/v2/account/profile/confirm-email': async (t, owner) => {
    const email = `confirm-${Date.now()}@example.org`
    const put = await t.request('PUT', '/account/profile', { key: owner.key, body: { ...fullProfile, email } })
    assert.equal(put.status, 200, put.text)
    await t.ctx.jobs.drain()
    const [mail] = await (t.ctx.drivers.mail as OutboxMailDriver).list({ to: email })
    return { body: { token: /\n {2}(\S+)\n/.exec(mail.text_body)![1] } }
  },
  // A method that is not the default yet, so a change that was not a dry run would show.
  'PUT /api/v2/account/paymethods': async (t, owner) => ({
    body: {
      default_paymethod_id: await t.ctx.services.paymethods.add(owner.accountId, {
        type: 'creditcard',
        holder: 'Dry',
        account: '4111111111111111',
      }),
    },
  }),
  'POST /api/v2/account/users': () => ({
    body: {
      email: 'dry-user@example.com',
      firstname: 'Dry',
      lastname: 'Run',
      password: 'a long enough password',
      permissions: { vps: true },
    },
  }),
  'POST /api/v2/account/tickets': () => ({ body: { subject: 'Dry', message: 'A question', department: 'sales' } }),
  'POST /api/v2/account/webhooks': () => ({ body: { url: 'https://hooks.example.nl/dry', events: ['*'] } }),
  // VPS.
  'POST /api/v2/vps/order': () => ({
    body: { product_id: 'vps-s', image_id: 'debian-12', hostname: 'dry.example.com' },
  }),
  'POST /api/v2/vps/ssh-keys': () => ({ body: { name: 'dry', public_key: ED25519 } }),
  'POST /api/v2/vps/floating-ips': () => ({ body: { location: 'ams' } }),
  'PUT /api/v2/vps/floating-ips/:id/attach': async (t, owner) => ({
    body: { vps_id: await makeVps(t, owner, { settle: true, location: 'ams' }) },
  }),
  'PUT /api/v2/vps/floating-ips/:id/detach': async (t, owner, f) => {
    const vpsId = await makeVps(t, owner, { settle: true, location: 'ams' })
    const r = await t.request('PUT', `/vps/floating-ips/${f.params.id}/attach`, {
      key: owner.key,
      body: { vps_id: vpsId },
    })
    assert.equal(r.status, 200, r.text)
    return {}
  },
  'POST /api/v2/vps/:id/vpc/subnets': async (t, owner, f) => {
    await ensureVpc(t, owner, f.params.id)
    return { body: { cidr: '10.21.0.0/24' } }
  },
  'PUT /api/v2/vps/:id/vpc/subnets/:subnet_id': async (t, owner, f) => {
    await ensureVpc(t, owner, f.params.id)
    const r = await t.request('POST', `/vps/${f.params.id}/vpc/subnets`, {
      key: owner.key,
      body: { cidr: '10.22.0.0/24' },
    })
    assert.equal(r.status, 200, r.text)
    return { params: { subnet_id: String(r.body.data.id) } }
  },
  'PUT /api/v2/vps/:id': async (t, owner, f) => {
    const detail = (await t.request('GET', `/vps/${f.params.id}`, { key: owner.key })).body.data
    return { body: { 'ip-addresses': [{ ip: detail.ips[0].ip, reverse: 'dry.example.com' }] } }
  },
  'PUT /api/v2/vps/:id/cancel-delete': async (t, owner, f) => {
    assert.equal((await t.request('DELETE', `/vps/${f.params.id}`, { key: owner.key })).status, 200)
    return {}
  },
  'POST /api/v2/vps/:id/start': async (t, owner, f) => {
    assert.equal((await t.request('POST', `/vps/${f.params.id}/stop`, { key: owner.key })).status, 200)
    await t.ctx.jobs.drain()
    return {}
  },
  'PATCH /api/v2/vps/:id/backups': async (t, owner, f) => {
    assert.equal((await t.request('POST', `/vps/${f.params.id}/backups`, { key: owner.key })).status, 200)
    await t.ctx.jobs.drain()
    const list = (await t.request('GET', `/vps/${f.params.id}/backups`, { key: owner.key })).body
    return { body: { key: list.details.backups[0].key } }
  },
}

/** The account's VPC on the VPS's host (one per host per account): made unless it exists. */
async function ensureVpc(t: TestApp, owner: TestAccount, vpsId: string): Promise<void> {
  const r = await t.request('POST', `/vps/${vpsId}/vpc`, { key: owner.key, body: { name: 'net' } })
  if (r.status !== 200) assert.equal(r.body.status_description, "A VPC exists already on this VPS's host")
}

/** The application's tables (PostgreSQL: of the current schema only), without the migration bookkeeping. */
async function tableNames(t: TestApp): Promise<string[]> {
  const db = t.ctx.db
  const names =
    t.dialect === 'postgres'
      ? (
          await sql<{ name: string }>`select table_name as name from information_schema.tables
        where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(db)
        ).rows.map((r) => r.name)
      : (await db.introspection.getTables()).map((x) => x.name)
  return names.filter((n) => !n.startsWith('kysely_') && !UNWATCHED.has(n)).sort()
}

/** Every row of every watched table. */
async function snapshot(t: TestApp, tables: string[]): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {}
  for (const name of tables) {
    const rows = (await sql<Record<string, unknown>>`select * from ${sql.table(name)} order by 1`.execute(t.ctx.db))
      .rows
    const skip = CALL_BOOKKEEPING[name] ?? []
    out[name] = rows.map((row) => Object.fromEntries(Object.entries(row).filter(([column]) => !skip.includes(column))))
  }
  return out
}

const openapiPath = (url: string) => url.replace(/:([A-Za-z_]+)/g, '{$1}')

forEachDialect((dialect) => {
  describe(`dry run (?test=1) of every mutating route (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    let routes: RouteEntry[]

    before(async () => {
      t = await startTestApp(dialect)
      a = await t.account('Dry Run B.V.')
      routes = t.server.app.routeTable.filter(
        (r) => r.url.startsWith(API_PREFIX) && r.area !== 'public' && MUTATING.has(r.method),
      )
    })
    after(() => t.close())

    it('every mutating route documents the test query parameter', () => {
      assert.ok(routes.length > 0)
      const doc = t.server.app.swagger() as {
        paths: Record<string, Record<string, { parameters?: { in: string; name: string }[] }>>
      }
      for (const r of routes) {
        const op = doc.paths[openapiPath(r.url)]?.[r.method.toLowerCase()]
        assert.ok(op, `${r.method} ${r.url} is not in the OpenAPI document`)
        assert.ok(
          op.parameters?.some((p) => p.in === 'query' && p.name === 'test'),
          `${r.method} ${r.url} does not take ?test=1`,
        )
      }
    })

    it('every setup of this file names a mutating route', () => {
      const known = new Set(routes.map((r) => `${r.method} ${r.url}`))
      for (const name of Object.keys(setups)) assert.ok(known.has(name), `setup ${name} names no mutating route`)
    })

    it('a valid call with ?test=1 answers 2xx and changes no table', async (tc) => {
      const tables = await tableNames(t)
      assert.ok(tables.includes('domains') && tables.includes('orders'), 'the snapshot reads the application tables')
      for (const r of routes) {
        await tc.test(`${r.method} ${r.url}`, async () => {
          const f: FixtureResult = r.fixture ? await fixtures[r.fixture](t, a, r) : { params: {} }
          // Fixtures leave provisioning tasks queued; a resource that is still being set up refuses most calls.
          await t.ctx.jobs.drain()
          const setup = setups[`${r.method} ${r.url}`]
          const call = setup ? await setup(t, a, f) : {}
          await t.ctx.jobs.drain()
          const params = { ...f.params, ...call.params }
          const path = r.url.replace(/:([A-Za-z_]+)/g, (_m, name: string) => encodeURIComponent(params[name]))
          const body = 'body' in call ? call.body : f.body
          const before = await snapshot(t, tables)
          const res = await t.request(r.method, `${path}?test=1`, {
            key: a.key,
            body,
            headers: { 'idempotency-key': `dry-${r.method}-${r.url}` },
          })
          assert.ok(
            res.status >= 200 && res.status < 300,
            `${r.method} ${path}?test=1 answered ${res.status} ${res.text}`,
          )
          const afterwards = await snapshot(t, tables)
          for (const name of tables)
            assert.deepEqual(afterwards[name], before[name], `${r.method} ${r.url} changed ${name}`)
        })
      }
    })
  })
})

// The answers of the domains area's dry runs: the usual shape (ids of what would be made are 0), and every
// refusal the same as without ?test=1.
forEachDialect((dialect) => {
  describe(`dry runs of the domains area answer as usual (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    before(async () => {
      t = await startTestApp(dialect)
      a = await t.account('Dry Domains B.V.')
    })
    after(() => t.close())

    const call = (method: string, path: string, body?: unknown) => t.request(method, path, { key: a.key, body })
    /** The refusal of a dry run, asserted equal to the refusal of the real call. */
    const refusal = async (method: string, path: string, body?: unknown) => {
      const dry = await call(method, `${path}?test=1`, body)
      const real = await call(method, path, body)
      assert.ok(dry.status >= 400 && dry.status < 500, `${method} ${path}: ${dry.text}`)
      assert.deepEqual(dry.body, real.body, `${method} ${path}`)
      return dry.body as { status: number; status_description: string }
    }

    it('answers what the call would do', async () => {
      const domain = await makeDomain(t, a)
      const put = await call('PUT', `/domains/${domain}?test=1`, { tags: ['dry'], is_locked: false })
      assert.equal(put.status, 200, put.text)
      assert.deepEqual([put.body.data.tags, put.body.data.is_locked], [['dry'], false])
      const stored = (await call('GET', `/domains/${domain}`)).body.data
      assert.deepEqual([stored.tags, stored.is_locked], [[], true])

      const cancel = await call('DELETE', `/domains/${domain}?test=1`)
      assert.equal(cancel.body.data.cancellation_date, stored.renewal_date)
      assert.equal((await call('GET', `/domains/${domain}`)).body.data.status, 'active')

      const contact = await call('POST', '/domains/contacts?test=1', contactProfile)
      assert.deepEqual(
        [contact.body.data.id, contact.body.data.name, contact.body.data.profile.country],
        [0, 'Jan Jansen', 'NL'],
      )
      const template = await call('POST', '/domains/dns-templates?test=1', {
        alias: 'web',
        records: [{ type: 'MX', name: '', value: 'mail.example.net.', priority: 10 }],
      })
      assert.deepEqual(template.body.data, {
        id: 0,
        alias: 'web',
        default: 0,
        records: [{ type: 'MX', name: '', value: '10 mail.example.net.', ttl: 3600 }],
      })
      const ns = await call('POST', '/domains/nameservers?test=1', {
        alias: 'Mine',
        nameservers: ['ns1.example.net', 'ns2.example.net'],
      })
      assert.equal(ns.body.data.alias, 'mine')
      assert.deepEqual(
        (await call('GET', '/domains/nameservers')).body.data.profiles.map((p: { alias: string }) => p.alias),
        ['default-mijnhost'],
      )
      const name = uniqueName('dry', 'com')
      const headers = { 'idempotency-key': 'order-once' }
      const order = await t.request('POST', '/domains/order?test=1', { key: a.key, body: { domain: name }, headers })
      assert.deepEqual(order.body.data, { order_id: 0 })
      assert.deepEqual((await call('GET', '/orders')).body.data.orders, [])
      // The dry run claimed no Idempotency-Key: the real order under the same key is placed, and a retry replays it.
      const real = await t.request('POST', '/domains/order', { key: a.key, body: { domain: name }, headers })
      assert.equal(real.status, 200, real.text)
      assert.ok(real.body.data.order_id > 0)
      const retry = await t.request('POST', '/domains/order', { key: a.key, body: { domain: name }, headers })
      assert.deepEqual([retry.headers['idempotent-replayed'], retry.body], ['true', real.body])
    })

    it('refuses in a dry run exactly what it refuses otherwise', async () => {
      const ordersBefore = (await call('GET', '/orders')).body.data.orders
      const domain = await makeDomain(t, a)
      const other = await t.account('Someone Else')
      const foreign = await makeDomain(t, other)
      assert.equal(
        (await refusal('PUT', `/domains/${foreign}`, { tags: [] })).status_description,
        'You have no access to this resource',
      )
      assert.equal((await refusal('PUT', `/domains/${domain}`, { tags: ['Not A Tag'] })).status, 400)
      assert.equal((await refusal('PUT', `/domains/${domain}/cancel-delete`)).status, 400)
      assert.equal(
        (
          await refusal('PUT', `/domains/${domain}/dns`, {
            records: [{ type: 'A', name: 'www', value: 'not-an-address', ttl: 3600 }],
          })
        ).status,
        400,
      )
      assert.equal(
        (
          await refusal('PATCH', `/domains/${domain}/dns`, {
            record: { type: 'CNAME', name: '', value: 'elsewhere.example.net.', ttl: 3600 },
          })
        ).status,
        400,
      )
      assert.equal(
        (await refusal('PUT', `/domains/${domain}/dns/zone`, { zone: 'www 3600 IN A 999.1.1.1\n' })).status,
        400,
      )

      const contact = await t.ctx.services.contacts.create(a.accountId, contactProfile)
      await call('PUT', `/domains/${domain}`, { profile: { owner: contact.id } })
      assert.equal(
        (await refusal('DELETE', `/domains/contacts/${contact.id}`)).status_description,
        'The contact profile is in use by a domain and cannot be deleted',
      )
      assert.equal((await refusal('POST', '/domains/contacts', { profile: { firstname: 'Only' } })).status, 400)

      await t.ctx.services.nameservers.create(a.accountId, {
        alias: 'taken',
        nameservers: ['ns1.example.net', 'ns2.example.net'],
      })
      await t.ctx.services.nameservers.create(a.accountId, {
        alias: 'mine',
        nameservers: ['ns1.example.net', 'ns2.example.net'],
      })
      assert.equal(
        (
          await refusal('POST', '/domains/nameservers', {
            alias: 'taken',
            nameservers: ['ns1.example.org', 'ns2.example.org'],
          })
        ).status_description,
        'A nameserver profile with this alias exists already',
      )
      assert.equal(
        (await refusal('PUT', '/domains/nameservers/mine', { alias: 'taken' })).status_description,
        'A nameserver profile with this alias exists already',
      )
      assert.equal((await refusal('DELETE', '/domains/nameservers/default-mijnhost')).status, 400)
      assert.equal((await refusal('POST', '/domains/dns-templates', { records: [] })).status, 400)

      assert.equal(
        (await refusal('POST', '/domains/order', { domain })).status_description,
        'This domain is not available for registration',
      )
      assert.equal(
        (await refusal('POST', '/domains/order', { domain: uniqueName('dry', 'com'), nameserver: 'no-such-profile' }))
          .status,
        404,
      )
      assert.deepEqual((await call('GET', '/orders')).body.data.orders, ordersBefore)
    })
  })
})
