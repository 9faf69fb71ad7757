import type { MigrationModule } from './helpers.js'
import * as foundation from './0001-foundation.js'
import * as idempotency from './0002-idempotency.js'
import * as domains from './0100-domains.js'
import * as domainProfiles from './0110-domain-profiles.js'
import * as tldPrices from './0120-tld-prices.js'
import * as registry from './0130-registry.js'
import * as certificates from './0350-certificates.js'
import * as orders from './0150-orders.js'
import * as vps from './0200-vps.js'
import * as vpsOrderItems from './0201-vps-order-items.js'
import * as account from './0300-account.js'
import * as admin from './0400-admin.js'
import * as reservedNames from './0410-reserved-names.js'
import * as usersEmailPerAccount from './0420-users-email-per-account.js'
import * as secretKeyChecks from './0430-secret-key-checks.js'
import * as affiliatePaymentInvoice from './0440-affiliate-payment-invoice.js'
import * as dnssec from './0450-dnssec.js'
import * as outboxDelivery from './0460-outbox-delivery.js'
import * as accountVersions from './0470-account-versions.js'
import * as acmeAccounts from './0480-acme-accounts.js'
import * as webhooks from './0490-webhooks.js'
import * as dnsRecordSet from './0500-dns-record-set.js'
import * as webhookOwner from './0510-webhook-owner.js'
import * as dnsRecordsByDomain from './0520-dns-records-by-domain.js'
import * as jobCrashes from './0530-job-crashes.js'
import * as jobKeys from './0540-job-keys.js'
import * as dnsZoneSync from './0590-dns-zone-sync.js'
import * as dnsCatalog from './0620-dns-catalog.js'
import * as registryRequestIds from './0630-registry-request-ids.js'
import * as outboxStatus from './0640-outbox-status.js'
import * as dnsRecordSetAt from './0650-dns-record-set-at.js'

/**
 * Every migration, by name. Names sort in the order they run; each area takes its own
 * hundred (0100 domains, 0200 VPS, 0300 account and certificates, 0400 operations). Each declares its kind,
 * expand or contract (see MigrationModule).
 */
export const migrations: Record<string, MigrationModule> = {
  '0001-foundation': foundation,
  '0002-idempotency': idempotency,
  '0100-domains': domains,
  '0110-domain-profiles': domainProfiles,
  '0120-tld-prices': tldPrices,
  '0130-registry': registry,
  '0350-certificates': certificates,
  '0150-orders': orders,
  '0200-vps': vps,
  '0201-vps-order-items': vpsOrderItems,
  '0300-account': account,
  '0400-admin': admin,
  '0410-reserved-names': reservedNames,
  '0420-users-email-per-account': usersEmailPerAccount,
  '0430-secret-key-checks': secretKeyChecks,
  '0440-affiliate-payment-invoice': affiliatePaymentInvoice,
  '0450-dnssec': dnssec,
  '0460-outbox-delivery': outboxDelivery,
  '0470-account-versions': accountVersions,
  '0480-acme-accounts': acmeAccounts,
  '0490-webhooks': webhooks,
  '0500-dns-record-set': dnsRecordSet,
  '0510-webhook-owner': webhookOwner,
  '0520-dns-records-by-domain': dnsRecordsByDomain,
  '0530-job-crashes': jobCrashes,
  '0540-job-keys': jobKeys,
  '0590-dns-zone-sync': dnsZoneSync,
  '0620-dns-catalog': dnsCatalog,
  '0630-registry-request-ids': registryRequestIds,
  '0640-outbox-status': outboxStatus,
  '0650-dns-record-set-at': dnsRecordSetAt,
}

/**
 * The newest migration each release shipped, oldest release first; the migrations after the last one ship in the next
 * release. Add the release here when it is cut: a contract migration must ship in a later release than the expand it
 * contracts (test/migration-kinds.test.ts).
 */
export const releases: Record<string, string> = {
  '0.1.0': '0500-dns-record-set',
}
