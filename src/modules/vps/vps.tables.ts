import type { ColumnType, Generated, Selectable } from 'kysely'

/** The VPS area: instances as the account sees them, their tasks, SSH keys, VPCs, subnets and floating IPs. */
export interface VpsTables {
  vps: VpsTable
  vps_tasks: VpsTasksTable
  vps_ssh_keys: VpsSshKeysTable
  vps_vpcs: VpsVpcsTable
  vps_subnets: VpsSubnetsTable
  vps_subnet_attachments: VpsSubnetAttachmentsTable
  vps_floating_ips: VpsFloatingIpsTable
}

export interface VpsTable {
  id: Generated<number>
  account_id: number
  name: string
  hostname: string
  product_id: string
  location: string
  /** The hypervisor host the instance runs on. */
  host: string
  /** The hypervisor driver's reference of the instance. */
  instance_ref: string
  image_id: string
  cpu: number
  memory_mb: number
  disk_gb: number
  /** `installing`, `running`, `stopped`, `rescue`, `starting`, `stopping`, `restarting`, `restoring`, `error`, `terminated`. */
  status: string
  rescue: number
  ipv4: string
  ipv6: string
  /** JSON map of IP address to reverse name. */
  reverse_dns: string
  /** JSON {enabled, rules[]}. */
  firewall: string
  /** The task that holds the VPS (queued or running); null when it is free. */
  task_id: number | null
  /** The order item the VPS was provisioned for, if it was ordered. */
  order_item_id: ColumnType<number | null, number | null | undefined, number | null>
  /** Months per billing period. */
  billing_months: number
  /** `YYYY-MM-DD` a pending cancellation takes effect, or null. */
  cancellation_date: string | null
  created_at: string
  updated_at: string
}

export interface VpsTasksTable {
  id: Generated<number>
  vps_id: number
  account_id: number
  /** `create`, `start`, `stop`, `poweroff`, `restart`, `rescue_on`, `rescue_off`, `reinstall`, `backup`, `restore`. */
  action: string
  status: 'queued' | 'running' | 'done' | 'failed'
  progress: number
  /** How many times a worker began this task. */
  attempts: number
  /** JSON parameters of the action; secrets in it are removed when the task ends. */
  params: string
  /** The VPS status before the task, restored when it fails. */
  previous_status: string
  /** The hypervisor's operation reference while it runs. */
  operation_ref: string | null
  error: string | null
  job_id: number | null
  created_at: string
  updated_at: string
  finished_at: string | null
}

export interface VpsSshKeysTable {
  id: Generated<number>
  account_id: number
  name: string
  public_key: string
  /** `SHA256:…`. */
  fingerprint: string
  key_type: string
  bits: number
  created_at: string
}

export interface VpsVpcsTable {
  id: Generated<number>
  account_id: number
  name: string
  host: string
  created_at: string
}

export interface VpsSubnetsTable {
  id: Generated<number>
  vpc_id: number
  account_id: number
  name: string
  cidr: string
  gateway: string
  dhcp_start: string
  dhcp_end: string
  created_at: string
}

export interface VpsSubnetAttachmentsTable {
  id: Generated<number>
  subnet_id: number
  vps_id: number
  address: string
  created_at: string
}

export interface VpsFloatingIpsTable {
  id: Generated<number>
  account_id: number
  ip: string
  location: string
  vps_id: number | null
  created_at: string
}

/** A VPS as stored (its JSON columns as text; vps.repository decodes them). */
export type VpsRow = Selectable<VpsTable>
/** A VPS task as stored (its params as JSON text; vps.repository decodes them). */
export type VpsTaskRow = Selectable<VpsTasksTable>
export type VpsSshKey = Selectable<VpsSshKeysTable>
export type VpsVpc = Selectable<VpsVpcsTable>
export type VpsSubnet = Selectable<VpsSubnetsTable>
export type VpsFloatingIp = Selectable<VpsFloatingIpsTable>
