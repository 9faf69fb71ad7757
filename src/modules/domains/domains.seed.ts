import { ymd } from '../../clock.js'
import type { Context } from '../../context.types.js'
import type { DemoSeeder } from '../../seed/demo-seeder.js'
import { addYears } from '../../lib/domain-name.js'

/**
 * Demo data of the domains area: a contact profile (default for every role), a nameserver profile, a DNS
 * template, three domains with tags and records, and one open order in `status: error` (a transfer with a
 * wrong code, which `PUT /orders/{id}` with the right code completes).
 */
export const seedDomains: DemoSeeder = async (ctx, account) => {
  const { nameservers, dnsTemplates, domains, dns, domainOrders, orderProcessing } = ctx.services
  const { accountId } = account
  const { contact, template } = await seedProfiles(ctx, accountId)
  const builtin = nameservers.builtin()
  const today = ymd(ctx.clock.now())
  const demo: { name: string; tags: string[]; extra: { type: string; name: string; value: string; ttl?: number }[] }[] =
    [
      {
        name: 'demo-shop.nl',
        tags: ['web', 'shop'],
        extra: [{ type: 'CAA', name: '', value: '0 issue "letsencrypt.org"' }],
      },
      {
        name: 'demo-blog.com',
        tags: ['web'],
        extra: [{ type: 'TXT', name: '_acme-challenge', value: 'demo-challenge-token', ttl: 120 }],
      },
      { name: 'demo-mail.eu', tags: ['mail'], extra: [{ type: 'SRV', name: '_imaps._tcp', value: '0 1 993 mail' }] },
    ]
  for (const [i, d] of demo.entries()) {
    const registered = await ctx.drivers.registry.register(d.name, 1)
    const renewalDate = registered.ok ? registered.expiresOn : addYears(today, 1)
    const domainId = await domains.create(ctx.db, {
      accountId,
      name: d.name,
      renewalDate,
      nameserverProfile: builtin.alias,
      nameservers: builtin.nameservers,
      contacts: { owner: contact.id, admin: contact.id, tech: contact.id, billing: contact.id },
    })
    const base = await dnsTemplates.recordsFor(accountId, template.id, d.name)
    await dns.replace(accountId, d.name, [...base, ...d.extra])
    await domains.update(accountId, d.name, { tags: d.tags, ...(i === 1 ? { is_locked: false } : {}) })
    await domainOrders.scheduleRenewal(ctx.db, accountId, domainId, renewalDate)
  }

  // A transfer with a wrong code: the order stays open with `status: error` and error code `transfer_code`.
  // Not charged: demo data is no purchase.
  const transferable = ctx.config.registry.taken.find((n) => n.authCode) ?? ctx.config.registry.taken[0]
  if (transferable) {
    const { orderId } = await domainOrders.order(
      accountId,
      { domain: transferable.name, type: 'transfer', transfer_code: 'WRONG-CODE' },
      { charge: false },
    )
    await orderProcessing.processOrder(orderId)
  }
}

/** A contact profile (default for every role), a nameserver profile and a DNS template (the default one). */
async function seedProfiles(ctx: Context, accountId: number) {
  const { contacts, nameservers, dnsTemplates } = ctx.services
  const contact = await contacts.create(accountId, {
    name: 'Demo B.V.',
    profile: {
      company_name: 'Demo B.V.',
      firstname: 'Demo',
      lastname: 'User',
      street: 'Stationsstraat',
      street_number: '12',
      street_suffix: 'a',
      zipcode: '1234 AB',
      city: 'Amsterdam',
      country: 'NL',
      email: 'demo@example.com',
      phone_country: '+31',
      phone_area: '20',
      phone_number: '1234567',
      defaults: { owner: true, admin: true, tech: true, billing: true },
    },
  })
  await nameservers.create(accountId, {
    alias: 'demo-external',
    nameservers: [
      { hostname: 'ns1.demo-dns.example', ipv4: '192.0.2.53' },
      { hostname: 'ns2.demo-dns.example', ipv6: '2001:db8::53' },
    ],
  })
  const template = await dnsTemplates.create(accountId, {
    alias: 'Website + mail',
    default: true,
    records: [
      { type: 'A', name: '', value: '192.0.2.80' },
      { type: 'AAAA', name: '', value: '2001:db8::80' },
      { type: 'CNAME', name: 'www', value: '@' },
      { type: 'MX', name: '', value: 'mail', priority: 10 },
      { type: 'A', name: 'mail', value: '192.0.2.25' },
      { type: 'TXT', name: '', value: 'v=spf1 mx -all' },
    ],
  })
  return { contact, template }
}
