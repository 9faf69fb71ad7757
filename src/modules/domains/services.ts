import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import type { Clock } from '../../clock.js'
import type { Config } from '../../config/config.js'
import type { DB } from '../../db/tables.js'
import type { RegistryDriver } from '../../drivers/registry/registry.js'
import type { WorkFaults } from '../../ops/faults.js'
import type { JobRunner } from '../../jobs/runner.js'
import { ContactsService } from './contacts/contacts.service.js'
import { DnsTemplatesService } from './templates/dns-templates.service.js'
import { ZoneWork } from './dns/zone-work.js'
import { DnsService } from './dns/dns.service.js'
import { DomainOrdersService } from './orders/domain-orders.service.js'
import { ExtensionsService } from './extensions/extensions.service.js'
import { NameserversService } from './nameservers/nameservers.service.js'
import type { OrdersService } from '../orders/orders.service.js'
import { DomainNames } from '../../lib/domain-name.js'
import { DomainsService } from './domains.service.js'
import { domainContactUse } from './domain-contacts.js'
import type { ZoneChanges } from './dns/zone-delivery.js'
import type { SecretBox } from '../../lib/secret-box.js'
import { ZoneKeys } from './dnssec/zone-keys.js'

/** The services of the domains area. */
export interface DomainServices {
  domains: DomainsService
  dns: DnsService
  contacts: ContactsService
  nameservers: NameserversService
  dnsTemplates: DnsTemplatesService
  extensions: ExtensionsService
  domainOrders: DomainOrdersService
  /** The DNSSEC signing keys of the zones served here (a holder of sealed secrets). */
  zoneKeys: ZoneKeys
}

/**
 * Builds the domains area. `zones` hands each zone change on to the DNS servers: its delivery is recorded in the
 * change's transaction, the servers are told after the commit. `orders` places the domain orders.
 */
export function createDomainServices(deps: {
  db: Kysely<DB>
  clock: Clock
  jobs: JobRunner
  config: Config
  log: Logger
  registry: RegistryDriver
  /** Seals the DNSSEC signing keys at rest. */
  secrets: SecretBox
  zones: ZoneChanges
  /** The most bytes one record set may take in a change to the DNS server; null or absent: no limit. */
  maxRecordSetBytes?: number | null
  /** Places the domain orders (OrdersService is built before this area). */
  orders: OrdersService
  /** Sandbox fault injection into asynchronous work; null in production. */
  faults?: WorkFaults | null
}): DomainServices {
  const { db, clock, jobs, config, registry, zones } = deps
  const nameservers = new NameserversService({ db, clock, defaultNameservers: config.defaultNameservers, zones })
  const contacts = new ContactsService({ db, clock, use: domainContactUse(db) })
  const dnsTemplates = new DnsTemplatesService({ db, clock })
  const extensions = new ExtensionsService({ db })
  const names = new DomainNames(config.domainNames.privateSuffixes)
  const zoneKeys = new ZoneKeys({ db, clock, box: deps.secrets })
  const domains = new DomainsService({ db, clock, jobs, registry, nameservers, contacts, zones, zoneKeys, names })
  const dns = new DnsService({
    db,
    clock,
    domains,
    zones,
    work: new ZoneWork(config.zones, deps.log),
    maxRecordSetBytes: deps.maxRecordSetBytes,
  })
  const domainOrders = new DomainOrdersService({
    db,
    clock,
    jobs,
    registry,
    orders: deps.orders,
    domains,
    dns,
    extensions,
    nameservers,
    contacts,
    dnsTemplates,
    zones,
    faults: deps.faults,
  })
  return { domains, dns, contacts, nameservers, dnsTemplates, extensions, domainOrders, zoneKeys }
}
