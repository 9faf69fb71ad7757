import type { DemoSeeder } from '../../seed/demo-seeder.js'
import { permissionMap } from '../iam/permissions.js'
import type { Principal } from '../iam/iam.service.js'
import { profileExample } from './profile/profile.schemas.js'

const DAY = 86_400_000

/**
 * Demo data of the account area: a filled-in profile, two payment methods (direct debit the default),
 * paid and open invoices, tickets with threads, and affiliate commissions (paid out, approved, rejected,
 * pending) with one affiliate payment.
 */
export const seedAccount: DemoSeeder = async (ctx, account) => {
  for (const seed of [seedProfileAndBilling, seedTickets, seedAffiliate]) await seed(ctx, account)
}

/** A filled-in profile, two payment methods (direct debit the default), paid and open invoices. */
const seedProfileAndBilling: DemoSeeder = async (ctx, account) => {
  const { profile, paymethods, invoices } = ctx.services
  const now = ctx.clock.now()
  const current = await profile.get(account.accountId)
  const { address, house_number, zipcode, city, country_code, phone, phone_country_code, company_vat_number } =
    profileExample
  await profile.update(account.accountId, {
    firstname: current.firstname,
    lastname: current.lastname,
    address,
    house_number,
    zipcode,
    city,
    country_code,
    phone,
    phone_country_code,
    email: current.email,
    email_invoices: 'invoices@example.com',
    company_vat_number,
  })

  await paymethods.add(account.accountId, {
    type: 'creditcard',
    holder: 'Demo User',
    account: '4111111111114242',
    expires: '2029-04',
  })
  const debit = await paymethods.add(account.accountId, {
    type: 'directdebit',
    holder: 'Demo B.V.',
    account: 'NL91ABNA0417164300',
  })
  await paymethods.setDefault(account.accountId, { default_paymethod_id: debit })

  const first = await invoices.create(account.accountId, {
    date: new Date(now.getTime() - 60 * DAY),
    lines: [
      { description: 'Domain registration demo-shop.nl (1 year)', amountCents: 999 },
      { description: 'Webhosting Basic (12 months)', amountCents: 5988 },
    ],
  })
  await invoices.markPaid(account.accountId, first.invoiceNr)
  const second = await invoices.create(account.accountId, {
    date: new Date(now.getTime() - 30 * DAY),
    lines: [
      { description: 'VPS Medium (1 month)', amountCents: 1500 },
      { description: 'Floating IP (1 month)', amountCents: 250 },
    ],
  })
  await invoices.markPaid(account.accountId, second.invoiceNr)
  await invoices.create(account.accountId, {
    date: new Date(now.getTime() - 2 * DAY),
    lines: [
      { description: 'SSL certificate www.demo-shop.nl (1 year)', amountCents: 2500 },
      { description: 'Extra mailbox', amountCents: 150, quantity: 3 },
    ],
  })
}

/** Two tickets with threads, one still open. */
const seedTickets: DemoSeeder = async (ctx, account) => {
  const { tickets } = ctx.services
  const owner: Principal = {
    accountId: account.accountId,
    customerNumber: account.customerNumber,
    userId: account.userId,
    isMainUser: true,
    permissions: permissionMap(true),
    keyId: 0,
    keyPrefix: '',
  }
  const dns = await tickets.create(owner, {
    subject: 'demo-shop.nl does not resolve',
    department: 'support',
    message: '<p>Since this morning <strong>demo-shop.nl</strong> does not resolve. Can you have a look?</p>',
  })
  await tickets.supportReply(dns.ticket_number, {
    author: 'Support desk',
    message:
      '<p>The zone was not published after your last change; it is published again. See <a href="https://status.example.com">our status page</a>.</p>',
  })
  const billing = await tickets.create(owner, {
    subject: 'Invoice address',
    department: 'administration',
    message: 'Could you send future invoices to invoices@example.com?\nThanks!',
  })
  await tickets.supportReply(billing.ticket_number, {
    author: 'Administration',
    message: 'Done: you can also change it yourself with PUT /account/profile.',
    close: true,
  })
}

/** Affiliate commissions: paid out, approved, rejected and pending, with one affiliate payment. */
const seedAffiliate: DemoSeeder = async (ctx, account) => {
  const { affiliate } = ctx.services
  const now = ctx.clock.now()
  const paid = await affiliate.addCommission(account.accountId, {
    orderNr: 880_123,
    subId: 'blog',
    description: 'VPS Medium, 12 months',
    saleCents: 18_000,
    commissionCents: 1_800,
    date: new Date(now.getTime() - 45 * DAY),
  })
  await affiliate.approve(account.accountId, paid)
  await affiliate.payOut(account.accountId, `AFF-${account.customerNumber}-001`)
  const approved = await affiliate.addCommission(account.accountId, {
    orderNr: 880_456,
    subId: '',
    description: 'Webhosting Basic, 12 months',
    saleCents: 5_988,
    commissionCents: 599,
    date: new Date(now.getTime() - 20 * DAY),
  })
  await affiliate.approve(account.accountId, approved)
  const rejected = await affiliate.addCommission(account.accountId, {
    orderNr: 880_789,
    subId: 'newsletter',
    description: 'Domain registration',
    saleCents: 999,
    commissionCents: 100,
    date: new Date(now.getTime() - 10 * DAY),
  })
  await affiliate.reject(account.accountId, rejected, 'The order was cancelled within the cooling-off period')
  await affiliate.addCommission(account.accountId, {
    orderNr: 880_999,
    subId: 'blog',
    description: 'SSL certificate',
    saleCents: 2_500,
    commissionCents: 250,
    date: new Date(now.getTime() - DAY),
  })
}
