import type { Logger } from 'pino'
import type { Challenge } from '../../drivers/ca/ca.js'
import type { AccountDns } from './account-dns.js'

/** What ValidationRecords is built on: the account's zones hosted here, and the log. */
export interface ValidationRecordsDeps {
  dns: AccountDns
  log: Logger
}

/** The TXT records of DNS validation that hostapi writes into, and removes from, the account's own zones. */
export class ValidationRecords {
  private readonly dns: AccountDns
  private readonly log: Logger

  constructor(deps: ValidationRecordsDeps) {
    this.dns = deps.dns
    this.log = deps.log
  }

  /** Writes the challenge's TXT records into the account's zones that hold them; returns the names written. */
  async publish(accountId: number, challenge: Challenge): Promise<string[]> {
    const dns = this.dns
    const created: string[] = []
    for (const record of challenge.dnsRecords) {
      const zone = await dns.zoneOf(accountId, record.name)
      if (!zone) continue
      await dns.addTxt(accountId, zone, record.name, record.value)
      created.push(record.name)
    }
    return created
  }

  /** The challenge's TXT record names that lie in zones the account hosts here. */
  async hostedNames(accountId: number, challenge: Challenge): Promise<string[]> {
    const dns = this.dns
    const hosted: string[] = []
    for (const record of challenge.dnsRecords) if (await dns.zoneOf(accountId, record.name)) hosted.push(record.name)
    return hosted
  }

  /** Removes the validation records hostapi wrote; a failure here must not undo an issued certificate. */
  async unpublish(accountId: number, challenge: Challenge, created: string[]): Promise<void> {
    const dns = this.dns
    for (const record of challenge.dnsRecords.filter((r) => created.includes(r.name))) {
      try {
        const zone = await dns.zoneOf(accountId, record.name)
        if (zone) await dns.removeTxt(accountId, zone, record.name, record.value)
      } catch (err) {
        this.log.warn({ err, accountId, record: record.name }, 'could not remove a certificate validation record')
      }
    }
  }
}
