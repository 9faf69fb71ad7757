import type { ServedZone, ZoneCatalog, ZoneRecord, ZoneSource } from '../../src/drivers/dns/dns.js'

/** A record to seed; the TTL defaults to 3600. */
export type RecordSeed = Omit<ZoneRecord, 'ttl'> & { ttl?: number }

/** A test port: served zones held in memory, changed by the test as the DNS module changes its tables. */
export class MemoryZones implements ZoneSource {
  private nextId = 1
  private catalogSerial = 1
  private catalogMembers = ''
  private readonly zones = new Map<number, { zone: ServedZone; records: ZoneRecord[] }>()

  /** Adds a served zone (serial 1, two hostapi.test nameservers, no records unless given); returns its id. */
  add(name: string, seed: { serial?: number; nameservers?: string[]; records?: RecordSeed[] } = {}) {
    const id = this.nextId++
    const nameservers = seed.nameservers ?? ['ns1.hostapi.test', 'ns2.hostapi.test']
    const nameserversJson = JSON.stringify(nameservers.map((hostname) => ({ hostname })))
    const records = (seed.records ?? []).map((r) => ({ ...r, ttl: r.ttl ?? 3600 }))
    this.zones.set(id, { zone: { id, name, serial: seed.serial ?? 1, nameserversJson }, records })
    return id
  }

  /** Adds one record (TTL 3600 unless given) and raises the serial. */
  addRecord(id: number, record: RecordSeed) {
    this.zones.get(id)!.records.push({ ...record, ttl: record.ttl ?? 3600 })
    this.bump(id)
  }

  /** Replaces every record of the zone and raises the serial. */
  setRecords(id: number, records: RecordSeed[]) {
    this.zones.get(id)!.records = records.map((r) => ({ ...r, ttl: r.ttl ?? 3600 }))
    this.bump(id)
  }

  /** Deletes the records `match` picks and raises the serial. */
  deleteRecords(id: number, match: (r: ZoneRecord) => boolean) {
    const z = this.zones.get(id)!
    z.records = z.records.filter((r) => !match(r))
    this.bump(id)
  }

  /** The zone's current serial. */
  serial(id: number): number {
    return this.zones.get(id)!.zone.serial
  }

  /** Sets the zone's nameservers and raises the serial. */
  setNameservers(id: number, hostnames: string[]) {
    this.zones.get(id)!.zone.nameserversJson = JSON.stringify(hostnames.map((hostname) => ({ hostname })))
    this.bump(id)
  }

  /** Turns DNSSEC on with `key` (null: off) and raises the serial. */
  setDnssec(id: number, key: ServedZone['dnssec']) {
    this.zones.get(id)!.zone.dnssec = key
    this.bump(id)
  }

  /** Stops serving the zone (the domain ended). */
  remove(id: number) {
    this.zones.delete(id)
  }

  private bump(id: number) {
    this.zones.get(id)!.zone.serial++
  }

  async servedZones(names: string[]): Promise<ServedZone[]> {
    return [...this.zones.values()].filter((z) => names.includes(z.zone.name)).map((z) => ({ ...z.zone }))
  }

  async servedZone(id: number): Promise<ServedZone | undefined> {
    const z = this.zones.get(id)
    return z && { ...z.zone }
  }

  async zoneRecords(zoneId: number): Promise<ZoneRecord[]> {
    return (this.zones.get(zoneId)?.records ?? []).map((r) => ({ ...r }))
  }

  async servedZoneNames(): Promise<string[]> {
    return [...this.zones.values()].map((z) => z.zone.name)
  }

  async catalog(): Promise<ZoneCatalog> {
    const zones = [...this.zones.values()].map(({ zone: { id, name } }) => ({ id, name }))
    const members = JSON.stringify(zones)
    if (members !== this.catalogMembers) this.catalogSerial++
    this.catalogMembers = members
    return { serial: this.catalogSerial, zones }
  }
}
