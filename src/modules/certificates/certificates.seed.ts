import type { DemoSeeder } from '../../seed/demo.js'

/** The name on the demo account's issued certificate. */
export const DEMO_CERTIFICATE_NAME = 'www.demo-shop.nl'

/** Demo data: one issued certificate, signed by the configured CA. */
export const seedCertificates: DemoSeeder = async (ctx, account) => {
  await ctx.services.certificates.seedIssued(account.accountId, DEMO_CERTIFICATE_NAME)
}
