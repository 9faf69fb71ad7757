// The audit row of a request commits with the request's first change, on both databases: with the first transaction
// the handler commits, or with its first write outside a transaction; never with a change rolled back, never twice,
// and not after the handler ended.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { type PendingAudit, withRequestAudit } from '../src/db/request-audit.js'

forEachDialect((dialect) => {
  describe(`a request's audit row and its change (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    let n = 0
    before(async () => {
      t = await startTestApp(dialect)
      a = await t.account('Audit row')
    })
    after(() => t.close())

    const pendingRow = (): PendingAudit => ({
      row: {
        account_id: a.accountId,
        ip: '127.0.0.1',
        method: 'PUT',
        path: '/audit-test',
        status: 200,
        request_id: `audit-${dialect}-${n++}`,
        created_at: '2026-01-01T00:00:00Z',
      },
      written: false,
      claimed: false,
      closed: false,
    })
    const rows = async (audit: PendingAudit) =>
      (await t.ctx.db.selectFrom('audit_log').select('id').where('request_id', '=', audit.row.request_id).execute())
        .length
    const rename = (name: string) => t.ctx.db.updateTable('accounts').set({ name }).where('id', '=', a.accountId)
    const nameNow = async () =>
      (await t.ctx.db.selectFrom('accounts').select('name').where('id', '=', a.accountId).executeTakeFirstOrThrow())
        .name

    it('commits with the first transaction the handler commits, once', async () => {
      const audit = pendingRow()
      await withRequestAudit(audit, async () => {
        await t.ctx.db
          .transaction()
          .execute((trx) => trx.updateTable('accounts').set({ name: 'one' }).where('id', '=', a.accountId).execute())
        await t.ctx.db
          .transaction()
          .execute((trx) => trx.updateTable('accounts').set({ name: 'two' }).where('id', '=', a.accountId).execute())
      })
      assert.deepEqual([await rows(audit), audit.written], [1, true])
      const written = await t.ctx.db
        .selectFrom('audit_log')
        .select('id')
        .where('request_id', '=', audit.row.request_id)
        .executeTakeFirstOrThrow()
      assert.equal(audit.id, written.id, 'the row id is kept (the plugin sets its status when the answer differs)')
    })

    it('is not written by a transaction rolled back, and goes with the next change', async () => {
      const audit = pendingRow()
      await withRequestAudit(audit, async () => {
        await assert.rejects(
          t.ctx.db.transaction().execute(async (trx) => {
            await trx.updateTable('accounts').set({ name: 'rolled back' }).where('id', '=', a.accountId).execute()
            throw new Error('no')
          }),
        )
        assert.deepEqual([await rows(audit), audit.written, audit.claimed], [0, false, false])
        // A write outside a transaction: it and the row in one transaction of their own.
        await rename('alone').execute()
      })
      assert.deepEqual([await rows(audit), audit.written, await nameNow()], [1, true, 'alone'])
    })

    it('is not written with a write that fails, nor after the handler ended', async () => {
      const audit = pendingRow()
      await withRequestAudit(audit, async () => {
        await assert.rejects(
          t.ctx.db
            .insertInto('accounts')
            .values({ id: a.accountId, customer_number: 1, name: 'x', status: 'active', created_at: 'x' })
            .execute(),
        )
      })
      assert.deepEqual([await rows(audit), audit.written, audit.claimed], [0, false, false])
      audit.closed = true
      await withRequestAudit(audit, () => rename('later').execute())
      assert.deepEqual([await rows(audit), audit.written], [0, false])
    })

    it('is not written by reads', async () => {
      const audit = pendingRow()
      await withRequestAudit(audit, () => nameNow())
      assert.deepEqual([await rows(audit), audit.written], [0, false])
    })
  })
})
