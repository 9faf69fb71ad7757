import type { Kysely } from 'kysely'
import type { DB } from '../../db/tables.js'
import type { AdminAccountsService } from './admin-accounts.service.js'
import type { DnsDriver } from '../../drivers/dns/dns.js'
import { probeDns, type ProbeAnswer } from './dns-probe.js'
import * as repo from './inspect.repository.js'

/** The most record sets of one domain asked of the built-in DNS server, and the most domains asked about. */
export const PROBE_SETS = 20
export const PROBE_DOMAINS = 20

export interface AdminInspectServiceDeps {
  db: Kysely<DB>
  accounts: AdminAccountsService
  /** The DNS driver: the built-in server has an address to ask; another driver has none (null). */
  dns: Pick<DnsDriver, 'address'>
}

/** The operator's view of one account's resources for the sandbox inspector. */
export class AdminInspectService {
  private readonly db: Kysely<DB>
  private readonly accounts: AdminAccountsService
  private readonly dns: Pick<DnsDriver, 'address'>

  constructor(deps: AdminInspectServiceDeps) {
    this.db = deps.db
    this.accounts = deps.accounts
    this.dns = deps.dns
  }

  /**
   * The account's domains with their records and what the built-in DNS server answers for them (the apex SOA and
   * each record set, up to PROBE_SETS per domain for the first PROBE_DOMAINS domains), its VPS with their latest
   * tasks, and its certificates.
   */
  async resources(customerNumber: number) {
    const account = await this.accounts.accountRow(customerNumber)
    const domains = await repo.accountDomains(this.db, account.id)
    const records = await repo.domainRecords(
      this.db,
      domains.map((d) => d.id),
    )
    const address = this.dns.address()
    const domainViews = await Promise.all(
      domains.map(async (d, i) => {
        const own = records.filter((r) => r.domain_id === d.id)
        const sets = [{ name: d.name, type: 'SOA' }]
        for (const r of own)
          if (!sets.some((s) => s.name === r.name && s.type === r.type)) sets.push({ name: r.name, type: r.type })
        const dns: ProbeAnswer[] | null =
          address && i < PROBE_DOMAINS ? await probeDns(address, sets.slice(0, PROBE_SETS)) : null
        return {
          name: d.name,
          status: d.status,
          renewal_date: d.renewal_date,
          is_locked: d.is_locked === 1,
          dnssec: d.dnssec_enabled === 1,
          managed_dns: d.managed_dns === 1,
          zone_serial: d.zone_serial,
          records: own.map((r) => ({ type: r.type, name: r.name, value: r.value, ttl: r.ttl })),
          dns,
        }
      }),
    )
    const vps = await repo.accountVps(this.db, account.id)
    const tasks = await repo.vpsTasks(
      this.db,
      account.id,
      vps.map((v) => v.id),
    )
    const certificates = await repo.accountCertificates(this.db, account.id)
    return {
      customer_number: account.customer_number,
      domains: domainViews,
      vps: vps.map((v) => ({
        id: v.id,
        name: v.name,
        hostname: v.hostname,
        product_id: v.product_id,
        location: v.location,
        status: v.status,
        rescue: v.rescue === 1,
        created_at: v.created_at,
        tasks: tasks
          .filter((t) => t.vps_id === v.id)
          .slice(0, repo.TASKS_PER_VPS)
          .map(({ vps_id: _v, ...t }) => t),
      })),
      certificates: certificates.map((c) => ({ ...c, domains: JSON.parse(c.domains) as unknown })),
    }
  }
}
