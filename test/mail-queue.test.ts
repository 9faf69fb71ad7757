import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { forEachDialect, startTestApp, type TestApp } from './helpers/app.js'
import { MailRejected } from '../src/drivers/mail/mail.js'
import type { OutboxMailDriver } from '../src/drivers/mail/builtin.js'

forEachDialect((dialect) => {
  describe(`outgoing mail through the job queue (${dialect})`, () => {
    let t: TestApp
    before(async () => {
      t = await startTestApp(dialect, { env: { HOSTAPI_MAIL_FROM: 'billing@hosting.example' } })
    })
    after(() => t.close())

    it('queues a message and delivers it to the mail driver when the job runs', async () => {
      const outbox = t.ctx.drivers.mail as OutboxMailDriver
      const { id } = await t.ctx.services.mail.send(t.ctx.db, {
        to: 'queue@example.com',
        subject: 'Queued',
        text: 'Body',
        kind: 'test',
      })
      assert.match(id, /^job-\d+$/)
      assert.deepEqual(await outbox.list({ to: 'queue@example.com' }), [])
      assert.ok((await t.ctx.jobs.drain()) >= 1)
      const [m] = await outbox.list({ to: 'queue@example.com' })
      assert.equal(m.subject, 'Queued')
      assert.equal(m.sender, 'billing@hosting.example')
      const job = await t.ctx.jobs.get(Number(id.slice(4)))
      assert.equal(job?.status, 'done')
    })

    it('refuses an unsendable message at once, without queueing it', async () => {
      await assert.rejects(
        t.ctx.services.mail.send(t.ctx.db, { to: 'bad address', subject: 'x', text: 'y', kind: 'test' }),
        MailRejected,
      )
      await assert.rejects(
        t.ctx.services.mail.send(t.ctx.db, {
          to: 'ok@example.com',
          subject: 'a\nBcc: x@example.com',
          text: 'y',
          kind: 'test',
        }),
        MailRejected,
      )
      assert.equal(await t.ctx.jobs.drain(), 0)
    })
  })
})
