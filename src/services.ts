import { AdminService } from './modules/admin/admin.service.js'
import { AdminAccountsService } from './modules/admin/admin-accounts.service.js'
import { AdminInspectService } from './modules/admin/inspect.service.js'
import { AdminActivityService } from './modules/admin/activity.service.js'
import { CatalogService } from './modules/admin/catalog.service.js'
import { SandboxEventsService } from './modules/admin/sandbox-events.service.js'
import { IamService } from './modules/iam/iam.service.js'
import { IdempotencyService } from './modules/idempotency/idempotency.service.js'
import { OrdersService } from './modules/orders/orders.service.js'
import { OrderProcessingService, type OrderProcessors } from './modules/orders/order-processing.service.js'
import { OrdersAdminService } from './modules/orders/orders-admin.service.js'
import { ZoneDelivery } from './modules/domains/dns/zone-delivery.js'
import { zoneSourceOf } from './modules/domains/dns/zone-source.js'
import { createDomainServices } from './modules/domains/services.js'
import { createVpsServices } from './modules/vps/services.js'
import { createAccountServices } from './modules/account/services.js'
import { createWebhooksService } from './modules/webhooks/services.js'
import { AffiliateService } from './modules/affiliate/affiliate.service.js'
import { MailService } from './modules/mail/mail.service.js'
import { CertificatesService } from './modules/certificates/certificates.service.js'
import { accountDnsOf } from './modules/certificates/account-dns.js'
import { SecretsService } from './modules/secrets/secrets.service.js'
import { domainEventSamplers } from './modules/domains/domain-events.js'
import { orderEventSamplers } from './modules/orders/order-events.js'
import { vpsEventSamplers } from './modules/vps/vps-events.js'
import { certificateEventSamplers } from './modules/certificates/certificate-events.js'
import { invoiceEventSamplers } from './modules/account/invoices/invoice-events.js'
import { ticketEventSamplers } from './modules/account/tickets/ticket-events.js'
import { type BaseDrivers, caFor } from './drivers.js'
import type { Drivers, Foundation, Services } from './context.types.js'

// A relay may be down for a while: 16 attempts back off from 1 s to 5 min, about 40 minutes in all.
const SMTP_MAIL_ATTEMPTS = 16

/**
 * Every service, each given its dependencies by name, in an order where each one's are built before it:
 * mail and IAM; the account area (invoices charge orders); orders (placing); the domains area, which places domain
 * orders; the CA, which reads the zones of the domains area; certificates; VPS; the processing of orders through the
 * areas' processors; the operator's services. Answers the drivers too, the CA among them.
 * `extraProcessors` provisions order item types no area does (the tests' `hosting` items).
 */
export function createServices(
  base: Foundation,
  baseDrivers: BaseDrivers,
  extraProcessors: OrderProcessors = {},
): { services: Services; drivers: Drivers } {
  const { config, db, clock, log, jobs, secrets, faults } = base
  const mail = new MailService({
    jobs,
    driver: baseDrivers.mail,
    log,
    opts: { maxAttempts: config.mailDriver.driver === 'smtp' ? SMTP_MAIL_ATTEMPTS : undefined },
  })
  const iam = new IamService({
    db,
    clock,
    opts: { emptyWhitelistAllowsAll: config.emptyWhitelistAllowsAll, authCacheMs: config.authCacheMs },
  })
  const d = config.dnsDriver
  const zoneDelivery = new ZoneDelivery(jobs, baseDrivers.dns, log.child({ component: 'dns' }), {
    db,
    clock,
    source: zoneSourceOf(db, secrets.box),
    probeMs: d.driver === 'powerdns' ? d.probeMs : 2000,
  })
  const accountArea = createAccountServices({
    db,
    clock,
    jobs,
    config,
    payments: baseDrivers.payments,
    mail,
    iam,
    log,
  })
  const orders = new OrdersService({ db, clock, jobs, log, charger: accountArea.invoices })
  const domainArea = createDomainServices({
    db,
    clock,
    jobs,
    config,
    log,
    registry: baseDrivers.registry,
    secrets: secrets.box,
    zones: zoneDelivery,
    maxRecordSetBytes: baseDrivers.dns.maxRecordSetBytes ?? null,
    orders,
    faults,
  })
  const accountDns = accountDnsOf(domainArea.domains, domainArea.dns)
  const drivers: Drivers = { ...baseDrivers, ca: caFor(base, accountDns, baseDrivers.dns) }
  const certificates = new CertificatesService({
    db,
    clock,
    jobs,
    ca: drivers.ca,
    orders,
    dns: accountDns,
    log,
    renewDays: config.caDriver.driver === 'acme' ? config.caDriver.acme.renewDays : null,
    faults,
  })
  const vpsArea = createVpsServices({ db, clock, jobs, config, hypervisor: drivers.hypervisor, faults })
  const orderProcessing = new OrderProcessingService({
    db,
    clock,
    jobs,
    orders,
    processors: {
      ...extraProcessors,
      domain: domainArea.domainOrders,
      certificate: { process: (item) => certificates.processOrderItem(item) },
      vps: { process: (item) => vpsArea.vps.ordering.processOrderItem(item) },
    },
  })
  const adminActivity = new AdminActivityService({ db, clock, mail })
  const adminAccounts = new AdminAccountsService({ db, iam })
  const services: Services = {
    ...domainArea,
    ...accountArea,
    ...vpsArea,
    iam,
    admin: new AdminService({ db, clock }),
    adminAccounts,
    adminInspect: new AdminInspectService({ db, accounts: adminAccounts, dns: drivers.dns }),
    adminCatalog: new CatalogService({ db, clock, names: domainArea.domains.names }),
    adminActivity,
    idempotency: new IdempotencyService({ db, clock, opts: { lockMs: config.idempotencyLockMs } }),
    orders,
    orderProcessing,
    ordersAdmin: new OrdersAdminService({ db, clock, jobs, orders, invoices: accountArea.invoices }),
    affiliate: new AffiliateService({ db, clock }),
    mail,
    certificates,
    secrets: new SecretsService({ db, clock, box: secrets.box }),
    zoneDelivery,
    webhooks: createWebhooksService({ db, clock, jobs, config, box: secrets.box, mail, log, faults }),
    sandboxEvents: new SandboxEventsService({
      db,
      clock,
      jobs,
      samplers: {
        ...domainEventSamplers,
        ...orderEventSamplers,
        ...vpsEventSamplers,
        ...certificateEventSamplers((trx, accountId, id) => certificates.eventData(trx, accountId, id)),
        ...invoiceEventSamplers((trx, accountId, id) => accountArea.invoices.eventData(trx, accountId, id)),
        ...ticketEventSamplers,
      },
    }),
  }
  return { services, drivers }
}
