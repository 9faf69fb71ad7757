import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { openDatabase, ownTables, type Database } from '../../db/database.js'
import { migrate } from '../../db/migrate.js'
import { systemClock } from '../../clock.js'
import { forEachDialect, freshDatabase, tempDir } from '../../../test/helpers/app.js'
import * as iam from '../../modules/iam/iam.repository.js'
import { PaymentRejected, type PaymentsDriver } from './payments.js'
import { LedgerPaymentsDriver } from './builtin.js'

/** The behaviour every payments driver must have. */
export function paymentsDriverContract(
  name: string,
  make: () => Promise<{ driver: PaymentsDriver; accountId: number; close(): Promise<void> }>,
) {
  describe(`payments driver contract: ${name}`, () => {
    let h: Awaited<ReturnType<typeof make>>
    before(async () => {
      h = await make()
    })
    after(() => h.close())

    it('opens a payment with a unique reference and an https payment URL that names it', async () => {
      const req = { accountId: h.accountId, description: 'Invoice 2026-000001', amountCents: 1210, currency: 'EUR' }
      const one = await h.driver.createPayment(req)
      const two = await h.driver.createPayment(req)
      assert.notEqual(one.reference, two.reference)
      assert.match(one.paymentUrl, /^https:\/\//)
      assert.ok(one.paymentUrl.includes(one.reference))
      assert.equal(await h.driver.status(one.reference), 'open')
    })

    it('settles a payment once; settling again changes nothing', async () => {
      const p = await h.driver.createPayment({
        accountId: h.accountId,
        description: 'x',
        amountCents: 500,
        currency: 'EUR',
      })
      await h.driver.settle(p.reference)
      assert.equal(await h.driver.status(p.reference), 'paid')
      await h.driver.settle(p.reference)
      assert.equal(await h.driver.status(p.reference), 'paid')
    })

    it('refuses zero, negative and fractional amounts, a bad currency and an unknown reference', async () => {
      const base = { accountId: h.accountId, description: 'x', currency: 'EUR' }
      for (const amountCents of [0, -100, 10.5])
        await assert.rejects(h.driver.createPayment({ ...base, amountCents }), PaymentRejected)
      await assert.rejects(h.driver.createPayment({ ...base, amountCents: 100, currency: 'euro' }), PaymentRejected)
      await assert.rejects(h.driver.status('pay_does_not_exist'), PaymentRejected)
      await assert.rejects(h.driver.settle('pay_does_not_exist'), PaymentRejected)
    })

    it('registers payment methods of its types with a masked description, and refuses other types', async () => {
      assert.ok(h.driver.methodTypes.length > 0)
      const card = await h.driver.registerMethod(h.accountId, {
        type: 'creditcard',
        holder: 'A. Customer',
        account: '4111 1111 1111 4242',
        expires: '2029-04',
      })
      assert.ok(card.reference)
      assert.ok(card.description.includes('4242'))
      assert.ok(!card.description.includes('4111 1111'), 'the card number is masked')
      await assert.rejects(
        h.driver.registerMethod(h.accountId, { type: 'cash', holder: 'x', account: '1234' }),
        PaymentRejected,
      )
    })
  })
}

forEachDialect((dialect) => {
  paymentsDriverContract(`built-in ledger (${dialect})`, async () => {
    const dir = tempDir()
    const fresh = await freshDatabase(dialect, dir)
    const database: Database = openDatabase(fresh.database)
    await migrate(database.db, database.schema)
    const account = await iam.insertAccount(database.db, {
      customer_number: 1,
      name: 'Payer',
      created_at: new Date().toISOString(),
    })
    return {
      driver: new LedgerPaymentsDriver(ownTables(database.db), systemClock, 'https://billing.example.com/pay'),
      accountId: account.id,
      close: async () => {
        await database.close()
        await fresh.drop()
        fs.rmSync(dir, { recursive: true, force: true })
      },
    }
  })
})
