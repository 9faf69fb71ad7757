import fs from 'node:fs'
import type { Logger } from 'pino'
import type { Kysely } from 'kysely'
import type { Config } from './config/config.js'
import type { Clock } from './clock.js'
import type { DB } from './db/tables.js'
import { ownTables } from './db/database.js'
import { renewalDateOf } from './modules/domains/domains.repository.js'
import { BuiltinRegistry } from './drivers/registry/builtin.js'
import type { HypervisorDriver } from './drivers/hypervisor/hypervisor.js'
import { BuiltinHypervisor } from './drivers/hypervisor/builtin.js'
import { LxdHypervisor } from './drivers/hypervisor/lxd.js'
import type { MailDriver } from './drivers/mail/mail.js'
import { OutboxMailDriver } from './drivers/mail/builtin.js'
import { SmtpMailDriver } from './drivers/mail/smtp.js'
import { LedgerPaymentsDriver } from './drivers/payments/builtin.js'
import type { DnsDriver, ZoneSource } from './drivers/dns/dns.js'
import { BuiltinDnsServer } from './drivers/dns/builtin.js'
import { PowerDnsDriver } from './drivers/dns/powerdns.js'
import type { CertificateAuthority } from './drivers/ca/ca.js'
import { BuiltinCa } from './drivers/ca/builtin.js'
import { AcmeCa } from './drivers/ca/acme.js'
import { zoneSourceOf } from './modules/domains/dns/zone-source.js'
import type { AccountDns } from './modules/certificates/account-dns.js'
import { addressLookup, servedTxtLookup, txtLookup } from './modules/certificates/txt-lookup.js'
import type { Drivers, Foundation } from './context.types.js'

/** The DNS driver HOSTAPI_DNS_DRIVER names, reading the zones it serves through `zones`. */
export function dnsDriverFor(config: Config, zones: ZoneSource, log: Logger): DnsDriver {
  const d = config.dnsDriver
  if (d.driver === 'powerdns') {
    const { url, apiKey, serverId, maxBodyBytes, concurrency, dnsAddress } = d
    return new PowerDnsDriver({ url, apiKey, serverId, maxBodyBytes, concurrency, dnsAddress }, zones, log)
  }
  const opts = { ...config.dns, privateSuffixes: config.domainNames.privateSuffixes, transfer: config.dnsTransfer }
  return new BuiltinDnsServer(zones, opts, log)
}

/** The hypervisor driver the configuration picks; LXD's client certificate, key and CA are read from their files. */
function hypervisorFor(config: Config, db: Kysely<DB>, clock: Clock): HypervisorDriver {
  const lxd = config.hypervisor.lxd
  if (config.hypervisor.driver !== 'lxd' || !lxd)
    return new BuiltinHypervisor(ownTables(db), clock, { speed: config.hypervisor.simSpeed })
  const read = (file: string | null) => (file ? fs.readFileSync(file, 'utf8') : undefined)
  return new LxdHypervisor({
    ...lxd,
    cert: read(lxd.clientCertFile),
    key: read(lxd.clientKeyFile),
    ca: read(lxd.caFile),
  })
}

/** The mail driver HOSTAPI_MAIL_DRIVER names: the built-in outbox or an SMTP relay (recording in the outbox). */
function mailDriverFor(config: Config, db: Kysely<DB>, clock: Clock): MailDriver {
  const d = config.mailDriver
  if (d.driver === 'smtp') return new SmtpMailDriver(ownTables(db), clock, config.mail.from, d.smtp)
  return new OutboxMailDriver(ownTables(db), clock, config.mail.from)
}

/** The drivers no service is needed for: all but the CA (built-in ones, or those the configuration names). */
export type BaseDrivers = Omit<Drivers, 'ca'>

/** The registry, hypervisor, mail, payments and DNS drivers. */
export function createDrivers(base: Foundation): BaseDrivers {
  const { config, db, clock, log, secrets } = base
  return {
    registry: new BuiltinRegistry(ownTables(db), clock, config.registry.taken, {
      renewalDate: (name) => renewalDateOf(db, name),
    }),
    hypervisor: hypervisorFor(config, db, clock),
    mail: mailDriverFor(config, db, clock),
    payments: new LedgerPaymentsDriver(ownTables(db), clock, config.payments.baseUrl),
    dns: dnsDriverFor(config, zoneSourceOf(db, secrets.box), log.child({ component: 'dns' })),
  }
}

/**
 * The CA HOSTAPI_CA_DRIVER names. It reads TXT records (and, for ACME, addresses) of the zones hosted here through
 * `accountDns`, built from the domains area, so it comes after the domains' services.
 */
export function caFor(base: Foundation, accountDns: AccountDns, dns: DnsDriver): CertificateAuthority {
  const { config, db, clock, log, secrets } = base
  if (config.caDriver.driver === 'acme') {
    // An ACME CA asks the zone's nameservers: so is the challenge checked before the CA is asked to look. Where the
    // DNS driver serves is known once it listens, so it is read at each lookup.
    const served = servedTxtLookup(accountDns, () => {
      const address = dns.address()
      return address ? [address] : []
    })
    return new AcmeCa(ownTables(db), clock, served, addressLookup(accountDns), secrets.box, config.caDriver.acme, log)
  }
  return new BuiltinCa(ownTables(db), clock, txtLookup(accountDns), secrets.box, (accountId, fqdn) =>
    accountDns.heldElsewhere(accountId, fqdn),
  )
}
