import type { Generated, Selectable } from 'kysely'

/** The built-in hypervisor's simulated state: instances, running operations, backups and floating addresses. */
export interface HypervisorSimTables {
  hv_instances: HvInstancesTable
  hv_operations: HvOperationsTable
  hv_backups: HvBackupsTable
  hv_floating_ips: HvFloatingIpsTable
}

export interface HvInstancesTable {
  id: Generated<number>
  host: string
  location: string
  power: 'running' | 'stopped'
  rescue: number
  image_id: string
  hostname: string
  root_password_hash: string | null
  rescue_password_hash: string | null
  /** JSON array of public keys installed for root. */
  ssh_keys: string
  ipv4: string
  ipv6: string
  /** JSON map of address to reverse name. */
  reverse_dns: string
  /** JSON {enabled, rules[]}. */
  firewall: string
  /** JSON array of {network, cidr, gateway, address}. */
  networks: string
  /** The guest ignores an ACPI shutdown (a graceful stop times out). */
  ignores_shutdown: number
  /** The next operation on this instance fails with this text (fault injection). */
  fail_next: string | null
  destroyed: number
  created_at: string
  updated_at: string
}

export interface HvOperationsTable {
  id: Generated<number>
  instance_id: number
  action: string
  /** JSON parameters. */
  params: string
  status: 'running' | 'done' | 'failed'
  started_at: string
  /** Simulated duration in milliseconds, already divided by the speed multiplier. */
  duration_ms: number
  /** Set when the operation will fail at its end. */
  fails_with: string | null
  error: string | null
  finished_at: string | null
}

export interface HvBackupsTable {
  id: Generated<number>
  instance_id: number
  type: 'incremental' | 'manual'
  /** `YYYYMMDD` for the nightly incrementals, a Unix timestamp string for manual ones. */
  date_internal: string
  size_mb: number
  image_id: string
  created_at: string
}

export interface HvFloatingIpsTable {
  id: Generated<number>
  ip: string
  location: string
  instance_id: number | null
  created_at: string
}

export type HvInstance = Selectable<HvInstancesTable>
export type HvOperation = Selectable<HvOperationsTable>
export type HvBackup = Selectable<HvBackupsTable>
