import type { DemoSeeder } from '../../seed/demo-seeder.js'

/** The name on the demo account's certificate. */
export const DEMO_CERTIFICATE_NAME = 'www.demo-shop.nl'

/**
 * Demo data: one certificate, issued by the configured CA when it signs without a validation (the built-in
 * CA); with an ACME CA an unrequested package instead (status NEW), which the demo user requests for a name the
 * CA can validate. The seed never sends an order to a CA for names the demo does not control.
 */
export const seedCertificates: DemoSeeder = async (ctx, account) => {
  const seeded = await ctx.services.certificates.seedDemo(account.accountId, DEMO_CERTIFICATE_NAME)
  if (!seeded.issued)
    ctx.log.info(
      { certificate_id: seeded.id, ca: ctx.drivers.ca.name },
      `Demo certificate ${DEMO_CERTIFICATE_NAME} not issued: this CA signs only within a validated order; the demo account has an unrequested certificate package instead`,
    )
}
