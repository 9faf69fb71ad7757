import { Type } from 'typebox'

/** Schemas of the VPS routes: request bodies, params and the objects the responses carry. */

export const VPS_ID_DESCRIPTION =
  "The VPS id. A non-numeric id answers 400 `No valid VPS ID provided`; an unknown id, another account's VPS (the two are " +
  'indistinguishable) or a sub-user without the `vps` permission answers 400 `No access to this VPS` (on every `/vps/{id}` route, as on the list-backups operation).'

export const VpsIdParams = Type.Object({ id: Type.String({ description: VPS_ID_DESCRIPTION }) })
export const SubnetParams = Type.Object({
  id: Type.String({ description: VPS_ID_DESCRIPTION }),
  subnet_id: Type.String(),
})
export const IdParams = Type.Object({ id: Type.String() })

export const Task = Type.Object({
  id: Type.Integer(),
  action: Type.String({
    description: 'create, start, stop, poweroff, restart, rescue_on, rescue_off, reinstall, backup, restore',
  }),
  status: Type.String({ description: 'queued, running, done or failed' }),
  progress: Type.Integer({ minimum: 0, maximum: 100 }),
  created: Type.String({ description: '`YYYY-MM-DD HH:MM`' }),
  error: Type.Union([Type.String(), Type.Null()]),
})
export const taskExample = {
  id: 812,
  action: 'start',
  status: 'queued',
  progress: 0,
  created: '2026-03-01 10:15',
  error: null,
}

export const TaskResult = Type.Object({ task: Task })

/** The description of every operation that queues a task: the lock and the state rules. */
export const TASK_DESCRIPTION =
  'Queues a task and returns it; the VPS shows it in `tasks[]` and is locked (`vps_locked`) until it ends. ' +
  'Any action while locked → 400 `VPS is locked by a running task`; ' +
  'an action that does not fit the state → 400 naming why.'

const STATUS_DESCRIPTION =
  'running, stopped, rescue (running the rescue system), error (an install or restore failed: reinstall), terminated (cancelled and ended), ' +
  'or while a task holds the VPS: installing, starting, stopping, restarting, restoring'

/** The fields a VPS shows first, in the list and in its details alike. */
const vpsIdentity = {
  id: Type.Integer(),
  name: Type.String(),
  hostname: Type.String(),
  status: Type.String({ description: STATUS_DESCRIPTION }),
  product: Type.String(),
  location: Type.String(),
}

export const VpsListItem = Type.Object({
  ...vpsIdentity,
  ipv4: Type.String(),
  ipv6: Type.String(),
  created: Type.String({ description: '`YYYY-MM-DD HH:MM`' }),
})
export const vpsListExample = {
  vps: [
    {
      id: 501,
      name: 'web1',
      hostname: 'web1.example.com',
      status: 'running',
      product: 'vps-m',
      location: 'ams',
      ipv4: '198.18.0.1',
      ipv6: '2001:db8:1::1',
      created: '2026-01-10 09:00',
    },
  ],
}

export const VpsDetail = Type.Object({
  ...vpsIdentity,
  host: Type.String({ description: 'The hypervisor host; a VPC belongs to one host' }),
  specs: Type.Object({ cpu: Type.Integer(), memory_mb: Type.Integer(), disk_gb: Type.Integer() }),
  image: Type.Object({
    id: Type.Union([Type.Integer(), Type.Null()], { description: 'The id in GET /vps/images; null once withdrawn' }),
    slug: Type.String(),
    name: Type.String(),
  }),
  ips: Type.Array(
    Type.Object({
      ip: Type.String(),
      version: Type.Integer(),
      type: Type.String({ description: 'primary or floating' }),
      reverse: Type.String({ description: 'The reverse DNS name (the hostname unless one was set)' }),
    }),
  ),
  private_networks: Type.Array(
    Type.Object({ subnet_id: Type.Integer(), name: Type.String(), cidr: Type.String(), address: Type.String() }),
  ),
  rescue: Type.Boolean(),
  tasks: Type.Array(Task, { description: 'Queued and running tasks' }),
  vps_locked: Type.Boolean({
    description:
      'True while a task is queued or running. Meanwhile every action (power, rescue, reinstall, reset-password, hostname, ' +
      'backup, restore) answers 400 `VPS is locked by a running task`; network settings (reverse DNS, firewall, VPC, floating IPs) and cancellation stay possible.',
  }),
  cancellation_date: Type.Union([Type.String({ description: '`YYYY-MM-DD`' }), Type.Null()]),
  created: Type.String(),
})
export const vpsDetailExample = {
  id: 501,
  name: 'web1',
  hostname: 'web1.example.com',
  status: 'starting',
  product: 'vps-m',
  location: 'ams',
  host: 'ams-hv01',
  specs: { cpu: 2, memory_mb: 4096, disk_gb: 80 },
  image: { id: 1, slug: 'debian-12', name: 'Debian 12 (Bookworm)' },
  ips: [
    { ip: '198.18.0.1', version: 4, type: 'primary', reverse: 'web1.example.com' },
    { ip: '2001:db8:1::1', version: 6, type: 'primary', reverse: 'web1.example.com' },
  ],
  private_networks: [{ subnet_id: 7, name: 'backend', cidr: '10.10.0.0/24', address: '10.10.0.2' }],
  rescue: false,
  tasks: [taskExample],
  vps_locked: true,
  cancellation_date: null,
  created: '2026-01-10 09:00',
}

export const ReverseDnsBody = Type.Object({
  'ip-addresses': Type.Array(
    Type.Object({
      ip: Type.String({ description: 'An address of the VPS (primary or an attached floating IP)' }),
      reverse: Type.String({ maxLength: 253, description: 'The reverse name; empty restores the default' }),
    }),
    { minItems: 1, maxItems: 20 },
  ),
})

export const RescueBody = Type.Object({ enable: Type.Boolean() })
export const RescueResult = Type.Object({
  task: Task,
  rescue_password: Type.Union([Type.String(), Type.Null()], {
    description: 'Root password of the rescue system, shown only this once; null when disabling',
  }),
})

/** `image_id` in a body: an image's integer `id` or its `slug`, both from GET /vps/images. */
export const ImageId = Type.Union([Type.Integer({ minimum: 1 }), Type.String({ minLength: 1, maxLength: 64 })], {
  description: 'An image from GET /vps/images: its integer `id` (`1`) or its `slug` (`debian-12`)',
  examples: [1],
})

export const ReinstallBody = Type.Object({
  image_id: ImageId,
  ssh_key_ids: Type.Optional(Type.Array(Type.Integer(), { maxItems: 20, description: 'SSH keys to install for root' })),
})
export const ReinstallResult = Type.Object({
  task: Task,
  root_password: Type.String({ description: 'The new root password, shown only this once' }),
})

export const PasswordResult = Type.Object({ root_password: Type.String({ description: 'Shown only this once' }) })

export const HostnameBody = Type.Object({
  hostname: Type.String({ minLength: 1, maxLength: 254, description: 'RFC 1123 hostname' }),
})
export const HostnameResult = Type.Object({ id: Type.Integer(), hostname: Type.String() })

export const CancelResult = Type.Object({
  id: Type.Integer(),
  cancellation_date: Type.Union([Type.String(), Type.Null()]),
})

export const Image = Type.Object({
  id: Type.Integer({ description: 'Stable; send it (or the slug) as `image_id` to reinstall or order' }),
  slug: Type.String({ description: 'The image by name (`debian-12`); accepted as `image_id` too' }),
  name: Type.String(),
  family: Type.String(),
  version: Type.String(),
})

export const Backup = Type.Object({
  type: Type.String({ description: '`incremental` (nightly) or `manual`' }),
  date_internal: Type.String({
    description: '`YYYYMMDD` for incremental backups, a Unix timestamp string for manual ones',
  }),
  key: Type.Integer({ description: 'The backup identifier, for restoring' }),
  date: Type.String({ description: '`YYYY-MM-DD HH:MM`' }),
  size: Type.Number({ description: 'Size in GB' }),
})
export const BackupList = Type.Object(
  {
    status: Type.Integer(),
    status_description: Type.String(),
    details: Type.Object({ backups: Type.Array(Backup), count: Type.Integer() }),
  },
  {
    examples: [
      {
        status: 200,
        status_description: 'Request successful',
        details: {
          backups: [
            { type: 'manual', date_internal: '1772359200', key: 91, date: '2026-03-01 10:00', size: 3.42 },
            { type: 'incremental', date_internal: '20260301', key: 90, date: '2026-03-01 03:00', size: 0.61 },
          ],
          count: 2,
        },
      },
    ],
  },
)
export const RestoreBody = Type.Object({
  key: Type.Integer({ description: 'The backup key from the list' }),
  type: Type.Optional(Type.Union([Type.Literal('incremental'), Type.Literal('manual')])),
})

export const SshKey = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  public_key: Type.String(),
  fingerprint: Type.String({ description: 'SHA256 fingerprint, `SHA256:…`' }),
  type: Type.String({ description: 'ed25519, ecdsa or rsa' }),
  bits: Type.Integer(),
  created: Type.String(),
})
export const sshKeyExample = {
  id: 12,
  name: 'laptop',
  public_key: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl laptop',
  fingerprint: 'SHA256:JXa7WuwldCXfOIQ4RdR6oeVKIHgTZVeAKe0O1yH5LIM',
  type: 'ed25519',
  bits: 256,
  created: '2026-03-01 10:15',
}
export const SshKeyBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 64 }),
  public_key: Type.String({
    minLength: 1,
    maxLength: 16384,
    description:
      'One line in OpenSSH format: ssh-ed25519, ecdsa-sha2-nistp256/384/521, or ssh-rsa of at least 2048 bits',
  }),
})

export const FirewallRule = Type.Object({
  direction: Type.Optional(Type.Literal('in', { description: 'Inbound rules only' })),
  protocol: Type.Union([Type.Literal('tcp'), Type.Literal('udp'), Type.Literal('icmp')]),
  port: Type.Optional(
    Type.Union([Type.String({ description: '`22` or a range `8000-8100`; omitted: every port' }), Type.Null()]),
  ),
  source: Type.Optional(Type.String({ description: 'An IPv4/IPv6 address or CIDR range; default 0.0.0.0/0' })),
  description: Type.Optional(Type.String({ maxLength: 255 })),
})
export const Firewall = Type.Object({
  enabled: Type.Boolean(),
  rules: Type.Array(
    Type.Object({
      direction: Type.String(),
      protocol: Type.String(),
      port: Type.Union([Type.String(), Type.Null()]),
      source: Type.String(),
      description: Type.String(),
    }),
  ),
})
export const firewallExample = {
  enabled: true,
  rules: [
    { direction: 'in', protocol: 'tcp', port: '22', source: '203.0.113.0/24', description: 'SSH from the office' },
  ],
}
export const FirewallBody = Type.Object({
  enabled: Type.Boolean(),
  rules: Type.Array(FirewallRule, { description: 'At most 50 rules' }),
})

export const Subnet = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  cidr: Type.String({ description: 'IPv4 CIDR block' }),
  gateway: Type.String(),
  dhcp_start: Type.String(),
  dhcp_end: Type.String(),
  created: Type.String({ description: '`DD-MM-YYYY HH:MM`' }),
})
export const subnetExample = {
  id: 7,
  name: 'backend',
  cidr: '10.10.0.0/24',
  gateway: '10.10.0.1',
  dhcp_start: '10.10.0.2',
  dhcp_end: '10.10.0.254',
  created: '01-03-2026 10:15',
}
export const Vpc = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  host: Type.String(),
  created: Type.String(),
  subnets: Type.Array(Subnet),
})
export const VpcBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 64 }) })
export const SubnetBody = Type.Object({
  name: Type.Optional(Type.String({ maxLength: 64, description: 'Defaults to the CIDR' })),
  cidr: Type.String({ description: 'A private IPv4 block (RFC 1918), /8 to /30, e.g. 10.10.0.0/24' }),
  gateway: Type.Optional(Type.String({ description: 'Default: the first usable address' })),
  dhcp_start: Type.Optional(Type.String({ description: 'Default: the second usable address' })),
  dhcp_end: Type.Optional(Type.String({ description: 'Default: the last usable address' })),
})
export const Attachment = Type.Object({
  vps_id: Type.Integer(),
  subnet_id: Type.Integer(),
  address: Type.String({ description: "The VPS's private address, from the DHCP range" }),
  cidr: Type.String(),
  gateway: Type.String(),
})

export const Product = Type.Object({
  id: Type.String(),
  name: Type.String(),
  cpu: Type.Integer(),
  memory_mb: Type.Integer(),
  disk_gb: Type.Integer(),
  price: Type.Number({ description: 'EUR per month, excluding VAT' }),
  locations: Type.Array(Type.String()),
  durations: Type.Array(Type.Integer()),
})
export const OrderBody = Type.Object({
  product_id: Type.String({ minLength: 1 }),
  image_id: ImageId,
  hostname: Type.String({ minLength: 1, maxLength: 254 }),
  location: Type.Optional(Type.String()),
  ssh_key_ids: Type.Optional(Type.Array(Type.Integer(), { maxItems: 20 })),
  duration: Type.Optional(Type.Integer({ description: 'Billing period in months: 1, 3, 6, 12 or 24 (default 1)' })),
})

export const FloatingIp = Type.Object({
  id: Type.Integer(),
  ip: Type.String(),
  location: Type.String(),
  vps_id: Type.Union([Type.Integer(), Type.Null()]),
  created: Type.String(),
})
export const floatingExample = { id: 3, ip: '198.19.128.1', location: 'ams', vps_id: 501, created: '2026-03-01 10:15' }
export const FloatingReserveBody = Type.Object({ location: Type.String({ description: 'ams or rtm' }) })
export const FloatingAttachBody = Type.Object({ vps_id: Type.Integer() })
