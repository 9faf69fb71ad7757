import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock, iso, systemClock } from '../src/clock.js'
import { insertPending } from '../src/modules/idempotency/idempotency.repository.js'
import { loadConfig } from '../src/config/config.js'
import { forEachDialect, startTestApp, type TestApp } from './helpers/app.js'

const DAY = 86_400_000

describe('retention settings', () => {
  it('default to 90 days each and refuse what is not a number of days', () => {
    assert.deepEqual(loadConfig({}).retention, { auditDays: 90, jobDays: 90, mailDays: 90 })
    assert.throws(
      () => loadConfig({ HOSTAPI_AUDIT_RETENTION_DAYS: '0', HOSTAPI_MAIL_RETENTION_DAYS: 'a week' }),
      (err: Error) =>
        err.message.includes('HOSTAPI_AUDIT_RETENTION_DAYS') && err.message.includes('HOSTAPI_MAIL_RETENTION_DAYS'),
    )
  })
})

forEachDialect((dialect) => {
  describe(`the daily prune keeps each kind of row for its own retention (${dialect})`, () => {
    let t: TestApp
    let token: string
    const clock = new ManualClock(systemClock)

    before(async () => {
      t = await startTestApp(dialect, {
        clock,
        env: {
          HOSTAPI_AUDIT_RETENTION_DAYS: '10',
          HOSTAPI_JOB_RETENTION_DAYS: '20',
          HOSTAPI_MAIL_RETENTION_DAYS: '30',
        },
      })
      token = (await t.ctx.services.admin.createToken('test')).token
    })
    after(() => t.close())

    /** What happens at one moment: an audited admin request, a mail sent by its (finished) job, the outbox row. */
    async function moment(n: number) {
      const { id } = await t.ctx.services.mail.send(t.ctx.db, {
        to: `m${n}@customer.example`,
        subject: 's',
        text: 'x',
        kind: 't',
      })
      const run = await t.request('POST', '/admin/v1/jobs/run', { headers: { authorization: `Bearer ${token}` } })
      assert.equal(run.status, 200, run.text)
      const job = Number(id.replace('job-', ''))
      assert.equal((await t.ctx.jobs.get(job))?.status, 'done')
      const audit = await t.ctx.db.selectFrom('audit_log').select('id').orderBy('id', 'desc').executeTakeFirstOrThrow()
      const outbox = await t.ctx.db
        .selectFrom('outbox')
        .select('id')
        .where('recipient', '=', `m${n}@customer.example`)
        .executeTakeFirstOrThrow()
      return { audit: audit.id, job, outbox: outbox.id }
    }

    /** Which of the moments' rows are still there, as `audit jobs outbox` flags per moment. */
    async function kept(moments: { audit: number; job: number; outbox: number }[]) {
      const has = async (table: 'audit_log' | 'jobs' | 'outbox', id: number) =>
        (await t.ctx.db.selectFrom(table).select('id').where('id', '=', id).executeTakeFirst()) ? 1 : 0
      const out: string[] = []
      for (const m of moments)
        out.push(`${await has('audit_log', m.audit)}${await has('jobs', m.job)}${await has('outbox', m.outbox)}`)
      return out
    }

    const prune = async () => {
      await t.ctx.jobs.enqueue(t.ctx.maintenance.pruneJob, null, { trx: t.ctx.db })
      await t.ctx.jobs.drain()
    }

    it('removes audit entries after 10 days, jobs after 20 and outbox messages after 30, nothing younger', async () => {
      const first = await moment(0)
      clock.advance(15 * DAY)
      const second = await moment(1)
      await prune()
      // Day 15: the first audit entry (15 days) is gone; its job and message are kept.
      assert.deepEqual(await kept([first, second]), ['011', '111'])
      clock.advance(9 * DAY)
      await prune()
      // Day 24: the first job (24 days) is gone too; the second moment (9 days) is whole.
      assert.deepEqual(await kept([first, second]), ['001', '111'])
      clock.advance(7 * DAY)
      await prune()
      // Day 31: the first message (31 days) is gone; of the second (16 days) only the audit entry.
      assert.deepEqual(await kept([first, second]), ['000', '011'])
    })

    it('removes Idempotency-Key answers once their 24 hours are over', async () => {
      const { accountId } = await t.account()
      const at = (hoursAgo: number) => iso(new Date(clock.now().getTime() - hoursAgo * 3_600_000))
      await insertPending(t.ctx.db, accountId, 'old', 'h', at(25))
      await insertPending(t.ctx.db, accountId, 'new', 'h', at(23))
      await prune()
      const left = await t.ctx.db
        .selectFrom('idempotency_keys')
        .select('idem_key')
        .where('account_id', '=', accountId)
        .execute()
      assert.deepEqual(
        left.map((r) => r.idem_key),
        ['new'],
      )
    })
  })
})
