import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { randomBytes } from 'node:crypto'
import { openDatabase, ownTables, type Database } from '../../db/database.js'
import { migrate } from '../../db/migrate.js'
import { systemClock, ymd } from '../../clock.js'
import { forEachDialect, freshDatabase, tempDir } from '../../../test/helpers/app.js'
import { addYears } from '../../lib/domain-name.js'
import type { RegistryDriver } from './registry.js'
import { BuiltinRegistry } from './builtin.js'
import { renewalDateOf } from '../../modules/domains/domains.repository.js'

/** What a contract run needs besides the driver: a name registered elsewhere with its code, and a premium name with its prices. */
export interface RegistryHarness {
  driver: RegistryDriver
  elsewhere: { name: string; authCode: string }
  premium: { name: string; registerCents: number; renewCents: number }
  close(): Promise<void>
}

/** The behaviour every registry driver must have. */
export function registryContract(label: string, make: () => Promise<RegistryHarness>) {
  describe(`registry driver contract: ${label}`, () => {
    let h: RegistryHarness
    const free = () => `contract-${randomBytes(5).toString('hex')}.com`
    before(async () => {
      h = await make()
    })
    after(() => h.close())

    it('reports a free name as available and registers it for the years asked', async () => {
      const name = free()
      assert.deepEqual(await h.driver.check(name), { status: 'available', premium: null })
      const r = await h.driver.register(name, 2)
      assert.deepEqual(r, { ok: true, expiresOn: addYears(ymd(new Date()), 2) })
      assert.equal((await h.driver.check(name)).status, 'unavailable')
      const again = await h.driver.register(name, 1)
      assert.equal(again.ok, false)
      assert.equal(!again.ok && again.code, 'unavailable')
    })

    it('gives the same request its registration again; another request finds the name taken', async () => {
      const name = free()
      const r = await h.driver.register(name, 2, 'request-1')
      assert.equal(r.ok, true)
      assert.deepEqual(await h.driver.register(name, 2, 'request-1'), r)
      const other = await h.driver.register(name, 2, 'request-2')
      assert.equal(!other.ok && other.code, 'unavailable')
    })

    it('gives a registered name a stable auth code, renews it and cancels it', async () => {
      const name = free()
      await h.driver.register(name, 1)
      const code = await h.driver.authCode(name)
      assert.ok(code.length >= 8)
      assert.equal(await h.driver.authCode(name), code)
      const renewed = await h.driver.renew(name, 3)
      assert.equal(renewed.expiresOn, addYears(ymd(new Date()), 4))
      await h.driver.cancel(name)
      assert.equal((await h.driver.check(name)).status, 'available')
    })

    it('publishes the DNSSEC keys of a name in the parent zone, replaced or removed as given', async () => {
      const name = free()
      await h.driver.register(name, 1)
      assert.deepEqual(await h.driver.dnssec(name), [])
      const key = {
        flags: 257,
        protocol: 3,
        algorithm: 13,
        publicKey: randomBytes(64).toString('base64'),
        keyTag: 12345,
        digestType: 2,
        digest: randomBytes(32).toString('hex'),
      }
      await h.driver.setDnssec(name, [key])
      assert.deepEqual(await h.driver.dnssec(name), [key])
      await h.driver.setDnssec(name, [])
      assert.deepEqual(await h.driver.dnssec(name), [])
    })

    it('prices a premium name', async () => {
      assert.deepEqual(await h.driver.check(h.premium.name), {
        status: 'available',
        premium: { registerCents: h.premium.registerCents, renewCents: h.premium.renewCents },
      })
    })

    it('transfers a name registered elsewhere only with its auth code', async () => {
      const { name, authCode } = h.elsewhere
      assert.equal((await h.driver.check(name)).status, 'transfer')
      assert.equal((await h.driver.register(name, 1)).ok, false)
      for (const wrong of ['wrong-code', null]) {
        const r = await h.driver.transfer(name, wrong)
        assert.equal(r.ok, false)
        assert.equal(!r.ok && r.code, 'transfer_code')
      }
      const r = await h.driver.transfer(name, authCode)
      assert.equal(r.ok, true)
      assert.equal((await h.driver.check(name)).status, 'unavailable')
      const twice = await h.driver.transfer(name, authCode)
      assert.equal(twice.ok, false)
    })

    it('refuses to transfer a name nobody holds, and calls a malformed name invalid', async () => {
      const r = await h.driver.transfer(free(), 'any')
      assert.equal(r.ok, false)
      assert.notEqual(!r.ok && r.code, 'transfer_code')
      assert.equal((await h.driver.check('not a name')).status, 'invalid')
      assert.equal((await h.driver.check('UPPER.com')).status, 'invalid', 'names are given in stored form')
    })
  })
}

forEachDialect((dialect) => {
  registryContract(`built-in (${dialect})`, async () => {
    const dir = tempDir()
    const fresh = await freshDatabase(dialect, dir)
    const database: Database = openDatabase(fresh.database)
    await migrate(database.db, database.schema)
    const elsewhere = { name: `elsewhere-${randomBytes(4).toString('hex')}.nl`, authCode: 'CONTRACT-CODE' }
    await database.db
      .insertInto('premium_names')
      .values({ name: 'contract-premium.com', register_cents: 123456, renew_cents: 9900 })
      .execute()
    return {
      driver: new BuiltinRegistry(ownTables(database.db), systemClock, [elsewhere], {
        renewalDate: (name) => renewalDateOf(database.db, name),
      }),
      elsewhere,
      premium: { name: 'contract-premium.com', registerCents: 123456, renewCents: 9900 },
      close: async () => {
        await database.close()
        await fresh.drop()
        fs.rmSync(dir, { recursive: true, force: true })
      },
    }
  })
})
