/**
 * The hypervisor behind the VPS area. The built-in driver simulates hosts and instances in the database;
 * a Proxmox VE or libvirt driver implements the same interface. Long actions return an `Operation`
 * that `wait` follows to its end (a Proxmox UPID, a libvirt job); the VPS service runs them inside jobs.
 */
export interface HypervisorDriver {
  /** The driver's name, for logs. */
  readonly name: string

  /** The hosts that can run instances, with their location. */
  listHosts(): Promise<HypervisorHost[]>
  /** The OS images instances can be installed from. */
  listImages(): Promise<OsImage[]>

  /** Allocates an instance (addresses, disk) on a host in `location` (or on `host`) and starts installing it. */
  createInstance(
    spec: InstanceSpec,
  ): Promise<{ ref: string; host: string; ipv4: string; ipv6: string; operation: Operation }>
  /** The instance as the hypervisor sees it now, or null when it does not exist. */
  getInstance(ref: string): Promise<InstanceState | null>
  /** Removes an instance and its backups for good. */
  destroyInstance(ref: string): Promise<void>

  /** Boots a stopped instance. */
  start(ref: string): Promise<Operation>
  /** Asks the guest to shut down (ACPI); the operation fails when the guest has not stopped within the timeout. */
  shutdown(ref: string, opts: { timeoutSeconds: number }): Promise<Operation>
  /** Cuts the power at once. */
  powerOff(ref: string): Promise<Operation>
  /** Reboots a running instance. */
  reboot(ref: string): Promise<Operation>
  /** Reboots into the rescue system with `password` for root, or (enabled false) back into the installed system. */
  setRescue(ref: string, enabled: boolean, password: string | null): Promise<Operation>
  /** Wipes the disk and installs the image with the slug `imageId`; the instance is running afterwards. */
  reinstall(ref: string, imageId: string, opts: { rootPassword: string; sshKeys: string[] }): Promise<Operation>

  /** Sets root's password in the running guest (guest agent). */
  setRootPassword(ref: string, password: string): Promise<void>
  /** Sets the guest's hostname. */
  setHostname(ref: string, hostname: string): Promise<void>
  /** Sets the reverse DNS name of one of the instance's addresses (empty name: back to the default). */
  setReverseDns(ref: string, ip: string, name: string): Promise<void>

  /** Starts a manual backup of the instance's disk. */
  createBackup(ref: string): Promise<Operation>
  /** Restores the disk from a backup; the instance is running afterwards. */
  restoreBackup(ref: string, key: number): Promise<Operation>
  /** Every backup of the instance, newest first: nightly `incremental` ones and `manual` ones. */
  listBackups(ref: string): Promise<Backup[]>
  /**
   * A value that changes whenever listBackups may answer differently other than through a write to hostapi's
   * database (the clock reaching the next nightly, a backup made outside hostapi), or null when the driver cannot
   * tell: lists are then read from the hypervisor on every request instead of from the response cache.
   */
  backupsVersion(): string | null

  /** Replaces the instance's inbound firewall. */
  setFirewall(ref: string, firewall: FirewallConfig): Promise<void>
  /** Connects the instance to a private network with a fixed address. */
  attachNetwork(ref: string, network: PrivateNetwork): Promise<void>

  /** Reserves a routable address in `location`. */
  reserveFloatingIp(location: string): Promise<string>
  /** Routes a floating address to an instance, or nowhere (null). */
  routeFloatingIp(ip: string, ref: string | null): Promise<void>
  /** Gives a floating address back. */
  releaseFloatingIp(ip: string): Promise<void>

  /**
   * Controls of a driver that simulates its instances (sandbox fault injection): with `failNext` the instance's next
   * operation runs and then fails with that error. A driver without it has an injected failure refused when the
   * operation is started.
   */
  simulate?(ref: string, behaviour: { failNext: string }): Promise<void>

  /** Follows an operation until it ends, reporting progress (0–100) on the way; never throws for a failed operation. */
  wait(operation: Operation, onProgress?: (percent: number) => Promise<void> | void): Promise<OperationResult>
}

export interface HypervisorHost {
  name: string
  location: string
}

/** An OS image: a stable integer id and a slug (`debian-12`); instances name their image by its slug. */
export interface OsImage {
  id: number
  slug: string
  name: string
  family: string
  version: string
}

export interface InstanceSpec {
  /** The account the instance belongs to (an opaque key): instances of one account share a network, no others. */
  tenant: string
  location: string
  /** Place on this host instead of choosing one. */
  host?: string
  /** The image's slug. */
  imageId: string
  hostname: string
  cpu: number
  memoryMb: number
  diskGb: number
  rootPassword: string
  sshKeys: string[]
}

export interface InstanceState {
  ref: string
  host: string
  power: 'running' | 'stopped'
  rescue: boolean
  /** The installed image's slug. */
  imageId: string
  hostname: string
}

/** A long action under way on the hypervisor. */
export interface Operation {
  ref: string
}

export type OperationResult = { ok: true } | { ok: false; error: string }

export interface Backup {
  type: 'incremental' | 'manual'
  /** `YYYYMMDD` or a Unix timestamp string. */
  dateInternal: string
  key: number
  createdAt: Date
  sizeMb: number
}

export interface FirewallRule {
  direction: 'in'
  protocol: 'tcp' | 'udp' | 'icmp'
  port: string | null
  source: string
  description: string
}

export interface FirewallConfig {
  enabled: boolean
  rules: FirewallRule[]
}

export interface PrivateNetwork {
  networkId: number
  cidr: string
  gateway: string
  address: string
}

/** The hypervisor refused an action (wrong power state, unknown instance); the action did not start. */
export class HypervisorError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'HypervisorError'
  }
}
