import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from '../../../../test/helpers/app.js'
import { insertZone } from '../../../../test/helpers/dns.js'
import { makeDomain } from '../../../../test/helpers/fixtures/domains.js'
import type { ZoneChange } from '../../../lib/dns/zone-serial.js'
import { createPrivateKey } from 'node:crypto'
import { p256Point } from '../../../lib/dns/dnssec.js'
import type { Dialect } from '../../../db/database.js'
import { zoneSourceOf } from './zone-source.js'

/** A test app with one account, started before the enclosing suite and closed after it. */
function appWithAccount(dialect: Dialect): { t: TestApp; accountId: number } {
  const app = { accountId: 0 } as { t: TestApp; accountId: number }
  before(async () => {
    app.t = await startTestApp(dialect)
    app.accountId = (await app.t.account()).accountId
  })
  after(() => app.t.close())
  return app
}

forEachDialect((dialect) => {
  describe(`the DNS driver's zone port over the tables (${dialect})`, () => {
    const app = appWithAccount(dialect)

    it('gives served zones by name (oldest first) and by id, with serial, nameservers and records', async () => {
      const { t, accountId } = app
      const zones = zoneSourceOf(t.ctx.db, t.ctx.secrets.box)
      const ns = [{ hostname: 'ns1.port.test' }]
      const id = await insertZone(t.ctx.db, accountId, 'port-a.nl', {
        serial: 42,
        nameservers: ns,
        records: [
          { type: 'A', name: 'port-a.nl', value: '192.0.2.1', ttl: 300 },
          { type: 'TXT', name: 'x.port-a.nl', value: 'one' },
        ],
      })
      const pending = await insertZone(t.ctx.db, accountId, 'port-b.nl', { status: 'pending_cancellation' })
      await insertZone(t.ctx.db, accountId, 'port-c.nl', { status: 'cancelled' })
      const served = { id, name: 'port-a.nl', serial: 42, nameserversJson: JSON.stringify(ns) }
      assert.deepEqual(await zones.servedZones(['port-a.nl']), [served])
      const three = await zones.servedZones(['port-c.nl', 'port-b.nl', 'port-a.nl'])
      assert.deepEqual(
        three.map((z) => z.id),
        [id, pending],
      )
      assert.deepEqual(await zones.servedZones([]), [])
      assert.deepEqual(await zones.servedZone(id), served)
      assert.equal((await zones.servedZone(pending))?.name, 'port-b.nl')
      assert.deepEqual(await zones.zoneRecords(id), [
        { type: 'A', name: 'port-a.nl', value: '192.0.2.1', ttl: 300 },
        { type: 'TXT', name: 'x.port-a.nl', value: 'one', ttl: 3600 },
      ])
      await t.ctx.db.updateTable('domains').set({ status: 'cancelled' }).where('id', '=', id).execute()
      assert.equal(await zones.servedZone(id), undefined)
      assert.deepEqual(await zones.servedZones(['port-a.nl']), [])
      assert.deepEqual(await zones.zoneRecords(-1), [])
    })
  })

  describe(`the catalog the zone port gives (${dialect})`, () => {
    const app = appWithAccount(dialect)

    it('one serial per set of served zones, raised once when the set changes, whoever reads it', async () => {
      const { t, accountId } = app
      const zones = zoneSourceOf(t.ctx.db, t.ctx.secrets.box)
      const first = await zones.catalog()
      assert.ok(first.serial > 1_700_000_000, 'starts at the time in seconds')
      assert.deepEqual(await zones.catalog(), first, 'unchanged set, unchanged serial')
      const id = await insertZone(t.ctx.db, accountId, 'catalog-a.nl')
      await insertZone(t.ctx.db, accountId, 'catalog-b.nl', { status: 'cancelled' })
      // Readers at once (several instances): the new set gets one new serial.
      const read = await Promise.all([zones.catalog(), zones.catalog(), zones.catalog()])
      assert.deepEqual(new Set(read.map((c) => c.serial)), new Set([first.serial + 1]))
      assert.deepEqual(read[0]!.zones, [...first.zones, { id, name: 'catalog-a.nl' }])
      await t.ctx.db.updateTable('domains').set({ zone_serial: 99 }).where('id', '=', id).execute()
      assert.equal((await zones.catalog()).serial, first.serial + 1, "a zone's own changes leave it")
      await t.ctx.db.deleteFrom('domains').where('id', '=', id).execute()
      const after = await zones.catalog()
      assert.deepEqual(after, { serial: first.serial + 2, zones: first.zones })
    })
  })

  describe(`the signing keys the zone port hands over (${dialect})`, () => {
    const app = appWithAccount(dialect)

    it('gives a managed zone with a key that key opened, an unmanaged one none; re-sealing keeps it', async () => {
      const { t, accountId } = app
      const zones = zoneSourceOf(t.ctx.db, t.ctx.secrets.box)
      const keys = t.ctx.services.zoneKeys
      const id = await insertZone(t.ctx.db, accountId, 'keyed.nl')
      assert.equal((await zones.servedZone(id))?.dnssec, undefined)
      const shown = await keys.create(id)
      assert.deepEqual([shown.algorithm, shown.flags], [13, 257])
      const served = (await zones.servedZone(id))!.dnssec!
      assert.deepEqual([served.algorithm, served.flags], [13, 257])
      const point = p256Point(createPrivateKey(served.privateKeyPem))
      assert.equal(point.toString('base64'), shown.publicKey)
      assert.deepEqual((await zones.servedZones(['keyed.nl']))[0]!.dnssec, served)

      const secrets = t.ctx.services.secrets
      assert.equal(await secrets.verify(), 0, 'sealed with the current key: nothing to do')
      assert.equal(await secrets.rotate(), 0)
      const row = await t.ctx.db.selectFrom('dnssec_zone_keys').selectAll().executeTakeFirstOrThrow()
      await t.ctx.db.updateTable('dnssec_zone_keys').set({ private_key: served.privateKeyPem }).execute()
      assert.equal(await secrets.verify(), 1, 'a key in the clear is sealed')
      assert.notEqual(
        (await t.ctx.db.selectFrom('dnssec_zone_keys').selectAll().executeTakeFirstOrThrow()).private_key,
        row.private_key,
      )
      assert.deepEqual((await zones.servedZone(id))!.dnssec, served)

      await t.ctx.db.updateTable('domains').set({ managed_dns: 0 }).where('id', '=', id).execute()
      assert.equal((await zones.servedZone(id))?.dnssec, undefined, 'served elsewhere: not signed here')
      await keys.remove(id)
      assert.equal(await keys.find(id), undefined)
    })
  })

  describe(`zone changes told to the DNS driver (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    const told: ZoneChange[] = []
    before(async () => {
      t = await startTestApp(dialect)
      a = await t.account()
      const driver = t.ctx.drivers.dns
      const publish = driver.publish.bind(driver)
      driver.publish = async (change) => {
        told.push(change)
        await publish(change)
      }
    })
    after(() => t.close())

    it('record changes name their owners; a replace or nameservers change the zone; an end removes it', async () => {
      const d = await makeDomain(t, a)
      const dns = t.ctx.services.dns
      told.length = 0
      await dns.patch(a.accountId, d, { type: 'A', name: 'www', value: '192.0.2.1' })
      await dns.remove(a.accountId, d, { type: 'A', name: 'www' })
      await dns.remove(a.accountId, d, { type: 'A', name: 'www' })
      await dns.patch(a.accountId, d, { type: 'TXT', name: '@', value: 'hello' })
      await dns.patch(a.accountId, d, { type: 'TXT', name: '@', value: null })
      await dns.replace(a.accountId, d, [{ type: 'A', name: 'www', value: '192.0.2.2' }])
      await dns.importZone(a.accountId, d, 'www 300 IN A 192.0.2.3')
      const nameservers = [{ hostname: 'ns1.elsewhere.example' }, { hostname: 'ns2.elsewhere.example' }]
      await t.ctx.services.domains.update(a.accountId, d, { nameservers })
      await t.ctx.services.domains.update(a.accountId, d, { tags: ['quiet'] })
      const row = await t.ctx.db
        .updateTable('domains')
        .set({ status: 'pending_cancellation', cancel_at: '2000-01-01' })
        .where('name', '=', d)
        .returning('id')
        .executeTakeFirstOrThrow()
      assert.deepEqual(await t.ctx.services.domains.endDomain(row.id), { ended: true })
      assert.deepEqual(told, [
        { domain: d, kind: 'records', names: [`www.${d}`] },
        { domain: d, kind: 'records', names: [`www.${d}`] },
        { domain: d, kind: 'records', names: [d] },
        { domain: d, kind: 'records', names: [d] },
        { domain: d, kind: 'zone' },
        { domain: d, kind: 'zone' },
        { domain: d, kind: 'zone' },
        { domain: d, kind: 'removed' },
      ])
    })
  })
})
