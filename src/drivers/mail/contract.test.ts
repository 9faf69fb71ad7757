import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { openDatabase, ownTables, type Database } from '../../db/database.js'
import { migrate } from '../../db/migrate.js'
import { systemClock } from '../../clock.js'
import { forEachDialect, freshDatabase, tempDir } from '../../../test/helpers/app.js'
import { MailRejected, type MailDriver } from './mail.js'
import { OutboxMailDriver } from './builtin.js'
import { SmtpMailDriver } from './smtp.js'
import { startSmtpServer } from '../../../test/helpers/smtp.js'

/** The behaviour every mail driver must have; `sentTo` reads back what the driver accepted for a recipient. */
export function mailDriverContract(
  name: string,
  make: () => Promise<{
    driver: MailDriver
    sentTo(to: string): Promise<{ subject: string; text: string }[]>
    close(): Promise<void>
  }>,
) {
  describe(`mail driver contract: ${name}`, () => {
    let h: Awaited<ReturnType<typeof make>>
    before(async () => {
      h = await make()
    })
    after(() => h.close())

    it('accepts a message and gives each one its own id', async () => {
      const m = { to: 'alice@example.com', subject: 'Hello', text: 'Body one', kind: 'test' }
      const one = await h.driver.send(m)
      const two = await h.driver.send({ ...m, text: 'Body two' })
      assert.ok(one.id && two.id)
      assert.notEqual(one.id, two.id)
      const sent = await h.sentTo('alice@example.com')
      assert.deepEqual(sent.map((s) => s.text).sort(), ['Body one', 'Body two'])
    })

    it('refuses an invalid recipient, a multi-line subject (header injection) and an empty subject', async () => {
      const base = { to: 'bob@example.com', subject: 'Hi', text: 'x', kind: 'test' }
      await assert.rejects(h.driver.send({ ...base, to: 'not an address' }), MailRejected)
      await assert.rejects(h.driver.send({ ...base, to: 'bob@example.com\r\nBcc: eve@example.com' }), MailRejected)
      await assert.rejects(h.driver.send({ ...base, subject: 'Hi\r\nBcc: eve@example.com' }), MailRejected)
      await assert.rejects(h.driver.send({ ...base, subject: '  ' }), MailRejected)
      assert.deepEqual(await h.sentTo('bob@example.com'), [])
      assert.deepEqual(await h.sentTo('eve@example.com'), [])
    })

    it('keeps non-ASCII text intact', async () => {
      await h.driver.send({
        to: 'carol@example.com',
        subject: 'Factuur € 12,10 — ü',
        text: 'Groeten, Zoë',
        kind: 'test',
      })
      const [m] = await h.sentTo('carol@example.com')
      assert.equal(m.subject, 'Factuur € 12,10 — ü')
      assert.equal(m.text, 'Groeten, Zoë')
    })
  })
}

forEachDialect((dialect) => {
  mailDriverContract(`built-in outbox (${dialect})`, async () => {
    const dir = tempDir()
    const fresh = await freshDatabase(dialect, dir)
    const database: Database = openDatabase(fresh.database)
    await migrate(database.db, database.schema)
    const driver = new OutboxMailDriver(ownTables(database.db), systemClock, 'noreply@example.com')
    return {
      driver,
      sentTo: async (to) =>
        (await driver.list({ to })).map((r) => {
          assert.equal(r.sender, 'noreply@example.com')
          return { subject: r.subject, text: r.text_body }
        }),
      close: async () => {
        await database.close()
        await fresh.drop()
        fs.rmSync(dir, { recursive: true, force: true })
      },
    }
  })
})

forEachDialect((dialect) => {
  mailDriverContract(`SMTP relay, a real SMTP server on loopback with STARTTLS (${dialect})`, async () => {
    const dir = tempDir()
    const fresh = await freshDatabase(dialect, dir)
    const database: Database = openDatabase(fresh.database)
    await migrate(database.db, database.schema)
    const server = await startSmtpServer({ login: { user: 'hostapi', password: 'relay-secret' } })
    const driver = new SmtpMailDriver(ownTables(database.db), systemClock, 'noreply@example.com', {
      host: '127.0.0.1',
      port: server.port,
      security: 'starttls',
      user: 'hostapi',
      password: 'relay-secret',
      caFile: server.caFile,
      dkim: null,
    })
    return {
      driver,
      sentTo: async (to) =>
        server.received
          .filter((r) => r.rcptTo.includes(to))
          .map((r) => {
            assert.equal(r.mailFrom, 'noreply@example.com')
            assert.ok(r.secure, 'sent over STARTTLS')
            return { subject: r.parsed.subject ?? '', text: (r.parsed.text ?? '').replace(/\n$/, '') }
          }),
      close: async () => {
        await server.close()
        await database.close()
        await fresh.drop()
        fs.rmSync(dir, { recursive: true, force: true })
      },
    }
  })
})
