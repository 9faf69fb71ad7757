import fs from 'node:fs'
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { Webhook } from 'standardwebhooks'
import { ManualClock } from '../src/clock.js'
import type { BuiltinHypervisor } from '../src/drivers/hypervisor/builtin.js'
import { forEachDialect, startTestApp, tempDir, type TestAccount, type TestApp } from './helpers/app.js'
import { makeCertificatePackage } from './helpers/fixtures/certificates.js'
import { makeDomain, uniqueName } from './helpers/fixtures/domains.js'
import { makeTicket } from './helpers/fixtures/account.js'
import { makeVps } from './helpers/fixtures/vps.js'
import { startReceiver, type Received, type Receiver } from './helpers/webhook-receiver.js'

// Each event kind is delivered once its cause happens through the API and the jobs, and verifies with the
// standardwebhooks library.

forEachDialect((dialect) => {
  describe(`webhook events (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    let receiver: Receiver
    let dir: string
    let secret: string
    const clock = new ManualClock()

    before(async () => {
      dir = tempDir()
      receiver = await startReceiver(dir)
      t = await startTestApp(dialect, {
        clock,
        env: {
          HOSTAPI_WEBHOOKS_ALLOW_PRIVATE: '1',
          HOSTAPI_WEBHOOKS_CA_FILE: receiver.caFile,
          HOSTAPI_REGISTRY_TAKEN: 'taken-hooks.com=RIGHT-CODE',
        },
      })
      a = await t.account('Events B.V.')
      const res = await t.request('POST', '/account/webhooks', {
        key: a.key,
        body: { url: `${receiver.origin}/events`, events: ['*'] },
      })
      secret = res.body.data.secret
    })
    after(async () => {
      await t.close()
      await receiver.close()
      fs.rmSync(dir, { recursive: true, force: true })
    })

    /** The payload of a request, after checking its signature with standardwebhooks. */
    // biome-ignore lint/suspicious/noExplicitAny: payloads are read field by field
    const payloadOf = (r: Received): any => {
      const at = Number(r.headers['webhook-timestamp'])
      if (Math.abs(at - Date.now() / 1000) < 300) return new Webhook(secret).verify(r.body, r.headers)
      // The library's verify refuses a timestamp minutes from the real time (the test clock moved on): compare
      // the signature with the one the library makes.
      const expected = new Webhook(secret).sign(r.headers['webhook-id'], new Date(at * 1000), r.body)
      assert.ok(r.headers['webhook-signature'].split(' ').includes(expected), 'signature')
      return JSON.parse(r.body)
    }

    /** Runs the jobs, then returns the events of `type` received since `from`. */
    const received = async (from: number, type: string) => {
      for (let i = 0; i < 5; i++) await t.ctx.jobs.drain()
      return receiver.received
        .slice(from)
        .map(payloadOf)
        .filter((p) => p.type === type)
    }

    it('dns.zone.changed when records change', async () => {
      const domain = await makeDomain(t, a)
      const from = receiver.received.length
      const put = await t.request('PUT', `/domains/${domain}/dns`, {
        key: a.key,
        body: { records: [{ type: 'A', name: '@', value: '192.0.2.1', ttl: 300 }] },
      })
      assert.equal(put.status, 200)
      const [e] = await received(from, 'dns.zone.changed')
      assert.equal(e.data.domain, domain)
      assert.equal(e.data.account, a.customerNumber)
      assert.match(e.timestamp, /^\d{4}-\d\d-\d\dT/)
    })

    it('dns.zone.changed when one record set is replaced with PATCH, once per change', async () => {
      const domain = await makeDomain(t, a)
      const from = receiver.received.length
      for (const value of ['token-one', 'token-two']) {
        const patch = await t.request('PATCH', `/domains/${domain}/dns`, {
          key: a.key,
          body: { record: { type: 'TXT', name: '_acme-challenge', value, ttl: 300 } },
        })
        assert.equal(patch.status, 200, patch.text)
      }
      const events = await received(from, 'dns.zone.changed')
      assert.deepEqual(
        events.map((e) => e.data.domain),
        [domain, domain],
      )
    })

    it('domain.order.completed and domain.order.failed as order items are processed', async () => {
      const name = uniqueName('hook', 'com')
      let from = receiver.received.length
      const ok = await t.request('POST', '/domains/order', { key: a.key, body: { domain: name } })
      assert.equal(ok.status, 200, ok.text)
      const [done] = await received(from, 'domain.order.completed')
      assert.deepEqual([done.data.domain, done.data.order_id, done.data.status], [name, ok.body.data.order_id, 'done'])
      from = receiver.received.length
      const bad = await t.request('POST', '/domains/order', {
        key: a.key,
        body: { domain: 'taken-hooks.com', type: 'transfer', transfer_code: 'WRONG' },
      })
      assert.equal(bad.status, 200, bad.text)
      const [failed] = await received(from, 'domain.order.failed')
      assert.equal(failed.data.domain, 'taken-hooks.com')
      assert.deepEqual(failed.data.errors, [{ code: 'transfer_code', description: 'The transfer code is not correct' }])
    })

    it('vps.task.completed, vps.task.failed and vps.status.changed as tasks end', async () => {
      let from = receiver.received.length
      const id = await makeVps(t, a, { settle: true })
      const [created] = await received(from, 'vps.task.completed')
      assert.deepEqual([created.data.vps_id, created.data.action, created.data.status], [id, 'create', 'done'])
      const [running] = await received(from, 'vps.status.changed')
      assert.deepEqual([running.data.vps_id, running.data.status], [id, 'running'])
      const ref = (
        await t.ctx.db.selectFrom('vps').select('instance_ref').where('id', '=', id).executeTakeFirstOrThrow()
      ).instance_ref
      await (t.ctx.drivers.hypervisor as BuiltinHypervisor).simulate(ref, { failNext: 'Host unreachable' })
      from = receiver.received.length
      const restart = await t.request('POST', `/vps/${id}/restart`, { key: a.key })
      assert.equal(restart.status, 200, restart.text)
      const [failed] = await received(from, 'vps.task.failed')
      assert.deepEqual(
        [failed.data.action, failed.data.status, failed.data.error],
        ['restart', 'failed', 'Host unreachable'],
      )
    })

    it('invoice.issued and invoice.paid', async () => {
      let from = receiver.received.length
      const { invoiceNr } = await t.ctx.services.invoices.create(a.accountId, {
        lines: [{ description: 'Hosting', amountCents: 1000 }],
      })
      const [issued] = await received(from, 'invoice.issued')
      assert.deepEqual([issued.data.invoice_nr, issued.data.paid], [invoiceNr, false])
      from = receiver.received.length
      await t.ctx.services.invoices.markPaid(a.accountId, invoiceNr)
      const [paid] = await received(from, 'invoice.paid')
      assert.deepEqual([paid.data.invoice_nr, paid.data.paid], [invoiceNr, true])
    })

    it('ticket.replied when support answers', async () => {
      const n = await makeTicket(t, a, 'Webhooks?')
      const from = receiver.received.length
      await t.ctx.services.tickets.supportReply(n, { author: 'Support', message: 'Yes, they work.' })
      const [e] = await received(from, 'ticket.replied')
      assert.deepEqual([e.data.ticket_number, e.data.author, e.data.subject], [n, 'Support', 'Webhooks?'])
    })

    it('domain.status.changed when a cancellation is requested and withdrawn', async () => {
      const domain = await makeDomain(t, a)
      const from = receiver.received.length
      assert.equal((await t.request('DELETE', `/domains/${domain}`, { key: a.key })).status, 200)
      assert.equal((await t.request('PUT', `/domains/${domain}/cancel-delete`, { key: a.key })).status, 200)
      const events = await received(from, 'domain.status.changed')
      assert.deepEqual(
        events.map((e) => [e.data.domain, e.data.status]),
        [
          [domain, 'pending_cancellation'],
          [domain, 'active'],
        ],
      )
    })

    it('domain.expiring 30 and 7 days before renewal, once each', async () => {
      const name = uniqueName('expiring', 'nl')
      const renewal = new Date(clock.now().getTime() + 20 * 86_400_000).toISOString().slice(0, 10)
      await t.ctx.services.domains.create(t.ctx.db, {
        accountId: a.accountId,
        name,
        renewalDate: renewal,
        nameserverProfile: null,
        nameservers: [],
        contacts: {},
      })
      // biome-ignore lint/suspicious/noExplicitAny: payloads are read field by field
      const mine = (events: any[]) => events.filter((e) => e.data.domain === name)
      let from = receiver.received.length
      await t.ctx.services.webhooks.scans.scanExpiring()
      await t.ctx.services.webhooks.scans.scanExpiring()
      const [thirty, ...more] = mine(await received(from, 'domain.expiring'))
      assert.deepEqual([thirty.data.days, thirty.data.renewal_date, more.length], [30, renewal, 0])
      clock.advance(14 * 86_400_000)
      from = receiver.received.length
      await t.ctx.services.webhooks.scans.scanExpiring()
      const [seven, ...again] = mine(await received(from, 'domain.expiring'))
      assert.deepEqual([seven.data.days, again.length], [7, 0])
    })

    it('certificate.issued once validation passes, certificate.failed when it never does', async () => {
      const id = await makeCertificatePackage(t, a)
      const csrFor = async (commonName: string) => {
        const body = { common_name: commonName, organization: 'Example B.V.', email: 'admin@example.com' }
        const location = { country: 'NL', state: 'Noord-Holland', locality: 'Amsterdam' }
        const res = await t.request('POST', '/certificates/csr', { key: a.key, body: { ...body, ...location } })
        return res.body.data.csr as string
      }
      let from = receiver.received.length
      const req = await t.request('POST', `/certificates/${id}/request`, {
        key: a.key,
        body: { csr: await csrFor('shop.example.com'), validation_method: 'http' },
      })
      assert.equal(req.status, 200, req.text)
      const [issued] = await received(from, 'certificate.issued')
      assert.deepEqual([issued.data.id, issued.data.certificate_status], [id, 'ACT'])

      const other = await makeCertificatePackage(t, a)
      from = receiver.received.length
      const pending = await t.request('POST', `/certificates/${other}/request`, {
        key: a.key,
        body: { csr: await csrFor('unhosted.invalid'), validation_method: 'dns' },
      })
      assert.equal(pending.status, 200, pending.text)
      assert.deepEqual(await received(from, 'certificate.failed'), [])
      clock.advance(8 * 24 * 3600_000)
      let failed: unknown[] = []
      for (let i = 0; i < 20 && failed.length === 0; i++) failed = await received(from, 'certificate.failed')
      // biome-ignore lint/suspicious/noExplicitAny: the payload is read field by field
      const [e] = failed as any[]
      assert.deepEqual([e.data.id, e.data.certificate_status], [other, 'ERR'])
    })
    it('certificate.expiring 30 days before an issued certificate expires', async () => {
      const [cert] = await t.ctx.db
        .selectFrom('certificates')
        .select(['id', 'valid_until'])
        .where('account_id', '=', a.accountId)
        .where('status', '=', 'ACT')
        .execute()
      clock.advance(Date.parse(cert.valid_until!) - clock.now().getTime() - 25 * 86_400_000)
      const from = receiver.received.length
      await t.ctx.services.webhooks.scans.scanExpiring()
      const events = (await received(from, 'certificate.expiring')).filter((e) => e.data.id === cert.id)
      assert.deepEqual(
        events.map((e) => [e.data.days, e.data.valid_until]),
        [[30, cert.valid_until]],
      )
    })
  })
})
