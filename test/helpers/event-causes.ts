import assert from 'node:assert/strict'
import type { ManualClock } from '../../src/clock.js'
import type { BuiltinHypervisor } from '../../src/drivers/hypervisor/builtin.js'
import type { EventType } from '../../src/modules/webhooks/webhook-events.js'
import type { TestAccount, TestApp } from './app.js'
import { makeTicket } from './fixtures/account.js'
import { makeCertificatePackage } from './fixtures/certificates.js'
import { makeDomain, uniqueName } from './fixtures/domains.js'
import { makeVps } from './fixtures/vps.js'

/** What a cause works with: the app (its registry refuses transfer code `WRONG` of `taken-hooks.com`), the account, the clock. */
export interface CauseContext {
  t: TestApp
  a: TestAccount
  clock: ManualClock
}

/** An event caused: which events of its type are this one (by their data), and a path of the API that reads it. */
export interface Caused {
  // biome-ignore lint/suspicious/noExplicitAny: event data are read field by field
  matches: (data: any) => boolean
  read: string
}

/** The environment the causes need from the test app. */
export const CAUSE_ENV = { HOSTAPI_REGISTRY_TAKEN: 'taken-hooks.com=RIGHT-CODE' }

async function certificateFor(c: CauseContext, commonName: string, method: 'http' | 'dns'): Promise<number> {
  const { t, a } = c
  const id = await makeCertificatePackage(t, a)
  const body = { common_name: commonName, organization: 'Example B.V.', email: 'admin@example.com' }
  const location = { country: 'NL', state: 'Noord-Holland', locality: 'Amsterdam' }
  const csr = await t.request('POST', '/certificates/csr', { key: a.key, body: { ...body, ...location } })
  const req = await t.request('POST', `/certificates/${id}/request`, {
    key: a.key,
    body: { csr: csr.body.data.csr, validation_method: method },
  })
  assert.equal(req.status, 200, req.text)
  return id
}

const byDomain = (domain: string) => ({
  matches: (d: { domain: string }) => d.domain === domain,
  read: `/domains/${domain}`,
})
const byVps = (id: number) => ({ matches: (d: { vps_id: number }) => d.vps_id === id, read: `/vps/${id}` })
const byCertificate = (id: number) => ({ matches: (d: { id: number }) => d.id === id, read: `/certificates/${id}` })

/**
 * One cause per event type, through the API and the jobs as the account's main user would meet it. Typed over
 * `EVENT_TYPES`: a new event type without a cause here does not compile. Causes that move the clock run last.
 */
export const EVENT_CAUSES: Record<EventType, (c: CauseContext) => Promise<Caused>> = {
  'domain.order.completed': async ({ t, a }) => {
    const domain = uniqueName('hook', 'com')
    const res = await t.request('POST', '/domains/order', { key: a.key, body: { domain } })
    assert.equal(res.status, 200, res.text)
    return { matches: (d) => d.domain === domain, read: `/orders/${res.body.data.order_id}` }
  },
  'domain.order.failed': async ({ t, a }) => {
    const res = await t.request('POST', '/domains/order', {
      key: a.key,
      body: { domain: 'taken-hooks.com', type: 'transfer', transfer_code: 'WRONG' },
    })
    assert.equal(res.status, 200, res.text)
    const orderId = res.body.data.order_id
    return { matches: (d) => d.order_id === orderId, read: `/orders/${orderId}` }
  },
  'domain.status.changed': async ({ t, a }) => {
    const domain = await makeDomain(t, a)
    assert.equal((await t.request('DELETE', `/domains/${domain}`, { key: a.key })).status, 200)
    return byDomain(domain)
  },
  'domain.expiring': async ({ t, a, clock }) => {
    const name = uniqueName('expiring', 'nl')
    const renewal = new Date(clock.now().getTime() + 20 * 86_400_000).toISOString().slice(0, 10)
    const input = { accountId: a.accountId, name, renewalDate: renewal, nameserverProfile: null }
    await t.ctx.services.domains.create(t.ctx.db, { ...input, nameservers: [], contacts: {} })
    await t.ctx.services.webhooks.scans.scanExpiring()
    return byDomain(name)
  },
  'dns.zone.changed': async ({ t, a }) => {
    const domain = await makeDomain(t, a)
    const patch = await t.request('PATCH', `/domains/${domain}/dns`, {
      key: a.key,
      body: { record: { type: 'TXT', name: '_acme-challenge', value: 'token', ttl: 300 } },
    })
    assert.equal(patch.status, 200, patch.text)
    return { ...byDomain(domain), read: `/domains/${domain}/dns` }
  },
  'vps.task.completed': async ({ t, a }) => byVps(await makeVps(t, a, { settle: true })),
  'vps.status.changed': async ({ t, a }) => byVps(await makeVps(t, a, { settle: true })),
  'vps.task.failed': async ({ t, a }) => {
    const id = await makeVps(t, a, { settle: true })
    const { instance_ref } = await t.ctx.db
      .selectFrom('vps')
      .select('instance_ref')
      .where('id', '=', id)
      .executeTakeFirstOrThrow()
    await (t.ctx.drivers.hypervisor as BuiltinHypervisor).simulate(instance_ref, { failNext: 'Host unreachable' })
    assert.equal((await t.request('POST', `/vps/${id}/restart`, { key: a.key })).status, 200)
    return byVps(id)
  },
  'certificate.issued': async (c) => byCertificate(await certificateFor(c, 'shop.example.com', 'http')),
  'invoice.issued': async ({ t, a }) => {
    const { invoiceNr } = await t.ctx.services.invoices.create(a.accountId, {
      lines: [{ description: 'Hosting', amountCents: 1000 }],
    })
    return { matches: (d) => d.invoice_nr === invoiceNr, read: `/account/invoices/${invoiceNr}` }
  },
  'invoice.paid': async ({ t, a }) => {
    const { invoiceNr } = await t.ctx.services.invoices.create(a.accountId, {
      lines: [{ description: 'Hosting', amountCents: 1000 }],
    })
    await t.ctx.services.invoices.markPaid(a.accountId, invoiceNr)
    return { matches: (d) => d.invoice_nr === invoiceNr, read: `/account/invoices/${invoiceNr}` }
  },
  'ticket.replied': async ({ t, a }) => {
    const n = await makeTicket(t, a, 'Webhooks?')
    await t.ctx.services.tickets.supportReply(n, { author: 'Support', message: 'Yes, they work.' })
    return { matches: (d) => d.ticket_number === n, read: `/account/tickets/${n}` }
  },
  // The clock moves from here on.
  'certificate.failed': async (c) => {
    const id = await certificateFor(c, 'unhosted.invalid', 'dns')
    c.clock.advance(8 * 24 * 3600_000)
    for (let i = 0; i < 20; i++) await c.t.ctx.jobs.drain()
    return byCertificate(id)
  },
  'certificate.expiring': async (c) => {
    const id = await certificateFor(c, 'expiring.example.com', 'http')
    await c.t.ctx.jobs.drain()
    const { valid_until } = await c.t.ctx.db
      .selectFrom('certificates')
      .select('valid_until')
      .where('id', '=', id)
      .executeTakeFirstOrThrow()
    assert.ok(valid_until, 'the certificate was issued')
    c.clock.advance(Date.parse(valid_until) - c.clock.now().getTime() - 25 * 86_400_000)
    await c.t.ctx.services.webhooks.scans.scanExpiring()
    return byCertificate(id)
  },
}
