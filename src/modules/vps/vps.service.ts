import { randomInt } from 'node:crypto'
import type { Kysely } from 'kysely'
import ipaddr from 'ipaddr.js'
import sshpk from 'sshpk'
import type { Clock } from '../../clock.js'
import { iso, ymd, ymdhm } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import { isUniqueViolation } from '../../db/errors.js'
import { ApiError, errors } from '../../errors.js'
import type { JobRunner } from '../../jobs/runner.js'
import { HypervisorError, type FirewallConfig, type HypervisorDriver, type Operation } from '../../drivers/hypervisor/hypervisor.js'
import * as repo from './vps.repository.js'
import type { Vps, VpsTask } from './vps.tables.js'
import { VPS_DURATIONS, VPS_PRODUCTS, findProduct } from './vps.catalog.js'
import { firstFreeAddress, isHostname, normaliseFirewall, planSubnet, type FirewallRuleInput, type SubnetInput } from './vps.network.js'

export const TASK_JOB = 'vps.task'
export const EXPIRE_JOB = 'vps.expire'

/** Actions that run as tasks. */
export type TaskAction = 'create' | 'start' | 'stop' | 'poweroff' | 'restart' | 'rescue_on' | 'rescue_off' | 'reinstall' | 'backup' | 'restore'
/** Every action the state rules know, tasks and immediate ones. */
export type VpsAction = Exclude<TaskAction, 'create'> | 'reset_password' | 'hostname'

/** Settled states: no task holds the VPS. */
export const SETTLED_STATES = ['running', 'stopped', 'rescue', 'error', 'terminated'] as const

const TRANSITIONAL: Record<TaskAction, string | null> = {
  create: 'installing',
  start: 'starting',
  stop: 'stopping',
  poweroff: 'stopping',
  restart: 'restarting',
  rescue_on: 'restarting',
  rescue_off: 'restarting',
  reinstall: 'installing',
  backup: null,
  restore: 'restoring',
}

/**
 * The state rules: for a settled status, whether an action may run, and the text when it may not.
 * A VPS held by a task refuses every action with `VPS is locked by a running task` before these apply.
 */
export function refusal(status: string, action: VpsAction): string | null {
  if (status === 'terminated') return 'This VPS has been cancelled and removed'
  if (status === 'error') return action === 'reinstall' ? null : 'The VPS is in an error state: reinstall it'
  const running = status === 'running'
  const rescue = status === 'rescue'
  const stopped = status === 'stopped'
  switch (action) {
    case 'start':
      return stopped ? null : 'VPS is already running'
    case 'stop':
    case 'poweroff':
      return stopped ? 'VPS is already stopped' : null
    case 'restart':
      return stopped ? 'VPS is stopped: start it instead' : null
    case 'rescue_on':
      return rescue ? 'Rescue mode is already enabled' : null
    case 'rescue_off':
      return rescue ? null : 'Rescue mode is not enabled'
    case 'reset_password':
      return running ? null : rescue ? 'The root password cannot be reset in rescue mode' : 'The VPS must be running to reset the root password'
    case 'reinstall':
    case 'hostname':
    case 'backup':
    case 'restore':
      return running || rescue || stopped ? null : `The VPS cannot do this while ${status}`
  }
}

const PASSWORD_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789'
/** A random password of 20 characters (about 116 bits). */
export const newPassword = (): string => Array.from({ length: 20 }, () => PASSWORD_ALPHABET[randomInt(PASSWORD_ALPHABET.length)]).join('')

const pad = (n: number) => String(n).padStart(2, '0')
/** `DD-MM-YYYY HH:MM`, the VPC subnet's date form. */
export const dmyhm = (d: Date): string =>
  `${pad(d.getUTCDate())}-${pad(d.getUTCMonth() + 1)}-${d.getUTCFullYear()} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`

const normaliseIp = (ip: string): string | null => {
  try {
    return ipaddr.parse(ip).toString()
  } catch {
    return null
  }
}

export interface ProvisionInput {
  productId: string
  imageId: string
  hostname: string
  location?: string
  sshKeyIds?: number[]
  billingMonths?: number
  /** Place on this host (tests, the operator). */
  host?: string
  /** The order item this VPS is provisioned for. */
  orderItemId?: number
  name?: string
}

export interface TaskView {
  id: number
  action: string
  status: VpsTask['status']
  progress: number
  created: string
  error: string | null
}

/** VPS instances, their tasks and state rules, SSH keys, firewall, VPC, subnets and floating IPs. */
export class VpsService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock,
    private readonly jobs: JobRunner,
    private readonly hypervisor: HypervisorDriver,
    private readonly opts: { shutdownTimeoutSeconds: number },
  ) {}

  /** Registers the task and expiry job handlers. */
  registerJobs(): void {
    this.jobs.register(TASK_JOB, async ({ payload, job, attempt }) => {
      const { taskId } = payload as { taskId: number }
      try {
        return await this.runTask(taskId)
      } catch (err) {
        // The last attempt failed on something unexpected (database, hypervisor API): end the task so the VPS is not held forever.
        if (attempt >= job.max_attempts) await this.abandonTask(taskId, err instanceof Error ? err.message : String(err))
        throw err
      }
    })
    this.jobs.register(EXPIRE_JOB, async ({ payload }) => this.expire((payload as { vpsId: number }).vpsId))
  }

  private now() {
    return this.clock.now()
  }

  // ---- Instances ---------------------------------------------------------------------------------

  /**
   * The VPS with this path id, of this account. A non-numeric or unknown id answers `No valid VPS ID provided`,
   * another account's VPS `No access to this VPS` (the texts of the list-backups operation, used on every VPS route).
   */
  async owned(accountId: number, rawId: string): Promise<Vps> {
    if (!/^\d{1,15}$/.test(rawId)) throw errors.noValidVpsId()
    const id = Number(rawId)
    const vps = await repo.findVps(this.db, accountId, id)
    if (vps) return vps
    throw (await repo.vpsExists(this.db, id)) ? errors.noAccessToVps() : errors.noValidVpsId()
  }

  async list(accountId: number) {
    const rows = await repo.listVps(this.db, accountId)
    return rows.map((v) => ({
      id: v.id,
      name: v.name,
      hostname: v.hostname,
      status: v.status,
      product: v.product_id,
      location: v.location,
      ipv4: v.ipv4,
      ipv6: v.ipv6,
      created: ymdhm(new Date(v.created_at)),
    }))
  }

  async details(accountId: number, rawId: string) {
    const v = await this.owned(accountId, rawId)
    return this.describe(v)
  }

  private async describe(v: Vps) {
    const [tasks, floating, networks, images] = await Promise.all([
      repo.openTasks(this.db, [v.id]),
      repo.floatingIpsOfVps(this.db, v.id),
      repo.attachmentsOfVps(this.db, v.id),
      this.hypervisor.listImages(),
    ])
    const reverse = JSON.parse(v.reverse_dns) as Record<string, string>
    const image = images.find((i) => i.id === v.image_id)
    return {
      id: v.id,
      name: v.name,
      hostname: v.hostname,
      status: v.status,
      product: v.product_id,
      location: v.location,
      host: v.host,
      specs: { cpu: v.cpu, memory_mb: v.memory_mb, disk_gb: v.disk_gb },
      image: { id: v.image_id, name: image?.name ?? v.image_id },
      ips: [
        { ip: v.ipv4, version: 4, type: 'primary', reverse: reverse[v.ipv4] ?? v.hostname },
        { ip: v.ipv6, version: 6, type: 'primary', reverse: reverse[v.ipv6] ?? v.hostname },
        ...floating.map((f) => ({ ip: f.ip, version: 4, type: 'floating', reverse: reverse[f.ip] ?? v.hostname })),
      ],
      private_networks: networks.map((n) => ({ subnet_id: n.subnet_id, name: n.name, cidr: n.cidr, address: n.address })),
      rescue: v.rescue === 1,
      tasks: tasks.map(taskView),
      vps_locked: v.task_id !== null,
      cancellation_date: v.cancellation_date,
      created: ymdhm(new Date(v.created_at)),
    }
  }

  /** Sets reverse DNS names of the VPS's addresses (an empty name restores the default). */
  async updateReverseDns(accountId: number, rawId: string, entries: Array<{ ip: string; reverse: string }>) {
    const v = await this.owned(accountId, rawId)
    if (v.status === 'terminated') throw errors.vpsWrongState(refusal('terminated', 'hostname')!)
    const floating = await repo.floatingIpsOfVps(this.db, v.id)
    const own = new Set([v.ipv4, v.ipv6, ...floating.map((f) => f.ip)].map((ip) => normaliseIp(ip)!))
    const changes: Array<{ ip: string; reverse: string }> = []
    for (const e of entries) {
      const ip = normaliseIp(e.ip)
      if (!ip || !own.has(ip)) throw errors.vpsIpNotOwned(e.ip)
      const name = e.reverse.trim().replace(/\.$/, '').toLowerCase()
      if (name !== '' && (!isHostname(name) || !name.includes('.'))) throw errors.vpsInvalidReverse(e.ip)
      changes.push({ ip, reverse: name })
    }
    const map = JSON.parse(v.reverse_dns) as Record<string, string>
    for (const c of changes) {
      await this.callDriver(() => this.hypervisor.setReverseDns(v.instance_ref, c.ip, c.reverse))
      if (c.reverse) map[c.ip] = c.reverse
      else delete map[c.ip]
    }
    await repo.updateVps(this.db, accountId, v.id, { reverse_dns: JSON.stringify(map), updated_at: iso(this.now()) })
    return this.describe((await repo.findVps(this.db, accountId, v.id))!)
  }

  /** Queues a power action: start, stop (graceful), poweroff (hard) or restart. */
  async power(accountId: number, rawId: string, action: 'start' | 'stop' | 'poweroff' | 'restart'): Promise<TaskView> {
    const v = await this.owned(accountId, rawId)
    return this.queueTask(v, action, {})
  }

  /** Enables (with a one-time root password for the rescue system) or disables rescue mode. */
  async rescue(accountId: number, rawId: string, enable: boolean) {
    const v = await this.owned(accountId, rawId)
    const password = enable ? newPassword() : null
    const task = await this.queueTask(v, enable ? 'rescue_on' : 'rescue_off', { password })
    return { task, rescue_password: password }
  }

  /** Reinstalls from an image; returns the new root password, shown only this once. */
  async reinstall(accountId: number, rawId: string, imageId: string, sshKeyIds: number[] = []) {
    const v = await this.owned(accountId, rawId)
    this.assertActionable(v, 'reinstall')
    if (!(await this.hypervisor.listImages()).some((i) => i.id === imageId)) throw errors.vpsUnknownImage()
    const keys = await this.sshKeysByIds(accountId, sshKeyIds)
    const password = newPassword()
    const task = await this.queueTask(v, 'reinstall', { imageId, password, sshKeys: keys })
    return { task, root_password: password }
  }

  /** Sets a new root password in the running guest and returns it once. */
  async resetPassword(accountId: number, rawId: string) {
    const v = await this.owned(accountId, rawId)
    this.assertActionable(v, 'reset_password')
    const password = newPassword()
    await this.callDriver(() => this.hypervisor.setRootPassword(v.instance_ref, password))
    return { root_password: password }
  }

  /** Changes the hostname (RFC 1123). */
  async setHostname(accountId: number, rawId: string, hostname: string) {
    const v = await this.owned(accountId, rawId)
    const name = hostname.trim().replace(/\.$/, '').toLowerCase()
    if (!isHostname(name)) throw errors.vpsInvalidHostname()
    this.assertActionable(v, 'hostname')
    await this.callDriver(() => this.hypervisor.setHostname(v.instance_ref, name))
    await repo.updateVps(this.db, accountId, v.id, { hostname: name, updated_at: iso(this.now()) })
    return { id: v.id, hostname: name }
  }

  /** Schedules the end of the VPS at the end of its current billing period. */
  async cancel(accountId: number, rawId: string) {
    const v = await this.owned(accountId, rawId)
    if (v.status === 'terminated') throw errors.vpsWrongState(refusal('terminated', 'hostname')!)
    if (v.cancellation_date) throw errors.vpsCancellationPending()
    const end = periodEnd(new Date(v.created_at), v.billing_months, this.now())
    const date = ymd(end)
    await repo.updateVps(this.db, accountId, v.id, { cancellation_date: date, updated_at: iso(this.now()) })
    await this.jobs.enqueue(EXPIRE_JOB, { vpsId: v.id }, { accountId, runAt: end })
    return { id: v.id, cancellation_date: date }
  }

  /** Undoes a pending cancellation. */
  async cancelDelete(accountId: number, rawId: string) {
    const v = await this.owned(accountId, rawId)
    if (!v.cancellation_date || v.status === 'terminated') throw errors.vpsNoCancellationPending()
    await repo.updateVps(this.db, accountId, v.id, { cancellation_date: null, updated_at: iso(this.now()) })
    return { id: v.id, cancellation_date: null }
  }

  async images() {
    return this.hypervisor.listImages()
  }

  // ---- Backups ----------------------------------------------------------------------------------

  async listBackups(accountId: number, rawId: string) {
    const v = await this.owned(accountId, rawId)
    if (v.status === 'terminated') return []
    const list = await this.hypervisor.listBackups(v.instance_ref)
    return list.map((b) => ({
      type: b.type,
      date_internal: b.dateInternal,
      key: b.key,
      date: ymdhm(b.createdAt),
      size: Math.round((b.sizeMb / 1024) * 100) / 100,
    }))
  }

  async createBackup(accountId: number, rawId: string) {
    const v = await this.owned(accountId, rawId)
    return this.queueTask(v, 'backup', {})
  }

  async restoreBackup(accountId: number, rawId: string, key: number, type?: string) {
    const v = await this.owned(accountId, rawId)
    this.assertActionable(v, 'restore')
    const backups = await this.hypervisor.listBackups(v.instance_ref)
    if (!backups.some((b) => b.key === key && (type === undefined || b.type === type))) throw errors.vpsBackupNotFound()
    return this.queueTask(v, 'restore', { key })
  }

  // ---- Tasks ------------------------------------------------------------------------------------

  private assertActionable(v: Vps, action: VpsAction): void {
    if (v.task_id !== null) throw errors.vpsLocked()
    const text = refusal(v.status, action)
    if (text) throw errors.vpsWrongState(text)
  }

  /** Records a task, gives it the VPS (or refuses: locked / wrong state) and queues its job. */
  private async queueTask(v: Vps, action: Exclude<TaskAction, 'create'>, params: Record<string, unknown>): Promise<TaskView> {
    this.assertActionable(v, action)
    const now = iso(this.now())
    const task = await this.db.transaction().execute(async (trx) => {
      const t = await repo.insertTask(trx, {
        vps_id: v.id, account_id: v.account_id, action, status: 'queued', progress: 0, attempts: 0,
        params: JSON.stringify(params), previous_status: v.status, created_at: now, updated_at: now,
      })
      if (!(await repo.holdVps(trx, v.account_id, v.id, t.id, TRANSITIONAL[action] ?? v.status, now))) throw errors.vpsLocked()
      return t
    })
    const jobId = await this.jobs.enqueue(TASK_JOB, { taskId: task.id }, { accountId: v.account_id, maxAttempts: 3 })
    await repo.updateTask(this.db, task.id, { job_id: jobId })
    return taskView((await repo.findTask(this.db, task.id))!)
  }

  /** Runs a task to its end: starts the hypervisor operation (or resumes it after a crash) and waits for it. */
  async runTask(taskId: number): Promise<{ status: string }> {
    const task = await repo.findTask(this.db, taskId)
    if (!task || task.status === 'done' || task.status === 'failed') return { status: task?.status ?? 'missing' }
    if (!(await repo.beginTask(this.db, taskId, iso(this.now())))) return { status: 'ended' }
    const vps = await repo.findVpsForJob(this.db, task.vps_id)
    if (!vps || vps.task_id !== task.id) return this.endTask(task, 'failed', 'The VPS is no longer held by this task')
    let operation: Operation
    if (task.operation_ref) operation = { ref: task.operation_ref }
    else {
      try {
        operation = await this.startOperation(vps, task)
      } catch (err) {
        if (err instanceof HypervisorError) return this.endTask(task, 'failed', err.message)
        throw err
      }
      await repo.updateTask(this.db, task.id, { operation_ref: operation.ref, updated_at: iso(this.now()) })
    }
    let last = -1
    const result = await this.hypervisor.wait(operation, async (percent) => {
      if (percent === last) return
      last = percent
      await repo.updateTask(this.db, task.id, { progress: percent, updated_at: iso(this.now()) })
    })
    return result.ok ? this.endTask(task, 'done', null) : this.endTask(task, 'failed', result.error)
  }

  private startOperation(vps: Vps, task: VpsTask): Promise<Operation> {
    const p = JSON.parse(task.params) as Record<string, unknown>
    const ref = vps.instance_ref
    switch (task.action as TaskAction) {
      case 'start': return this.hypervisor.start(ref)
      case 'stop': return this.hypervisor.shutdown(ref, { timeoutSeconds: this.opts.shutdownTimeoutSeconds })
      case 'poweroff': return this.hypervisor.powerOff(ref)
      case 'restart': return this.hypervisor.reboot(ref)
      case 'rescue_on': return this.hypervisor.setRescue(ref, true, p.password as string)
      case 'rescue_off': return this.hypervisor.setRescue(ref, false, null)
      case 'reinstall': return this.hypervisor.reinstall(ref, p.imageId as string, { rootPassword: p.password as string, sshKeys: (p.sshKeys as string[]) ?? [] })
      case 'backup': return this.hypervisor.createBackup(ref)
      case 'restore': return this.hypervisor.restoreBackup(ref, Number(p.key))
      case 'create': throw new HypervisorError('The instance was not created')
    }
  }

  /**
   * Ends a task and frees the VPS. Success sets the state the action leads to; a failure reads the state
   * back from the hypervisor, and an install or restore that failed leaves the VPS in `error`.
   */
  private async endTask(task: VpsTask, outcome: 'done' | 'failed', error: string | null): Promise<{ status: string }> {
    const now = iso(this.now())
    const { password: _p, sshKeys: _k, ...kept } = JSON.parse(task.params) as Record<string, unknown>
    const vps = await repo.findVpsForJob(this.db, task.vps_id)
    let status = task.previous_status
    let image: string | undefined
    if (outcome === 'done') {
      const action = task.action as TaskAction
      if (action === 'start' || action === 'rescue_off' || action === 'reinstall' || action === 'create' || action === 'restore') status = 'running'
      else if (action === 'stop' || action === 'poweroff') status = 'stopped'
      else if (action === 'rescue_on') status = 'rescue'
      if (action === 'reinstall') image = JSON.parse(task.params).imageId
    } else if (['create', 'reinstall', 'restore'].includes(task.action)) {
      status = 'error'
    } else if (vps) {
      const state = await this.hypervisor.getInstance(vps.instance_ref).catch(() => null)
      if (state) status = state.rescue && state.power === 'running' ? 'rescue' : state.power
    }
    if (vps && outcome === 'done' && task.action === 'restore') {
      const state = await this.hypervisor.getInstance(vps.instance_ref).catch(() => null)
      if (state) image = state.imageId
    }
    await this.db.transaction().execute(async (trx) => {
      if (!(await repo.endTask(trx, task.id, { status: outcome, error, params: JSON.stringify(kept), now }))) return
      await repo.releaseVps(trx, task.vps_id, task.id, { status, rescue: status === 'rescue' ? 1 : 0, ...(image ? { image_id: image } : {}), updated_at: now })
    })
    return { status: outcome }
  }

  /** Ends a task that could not be run, reading the VPS's state back from the hypervisor. */
  private async abandonTask(taskId: number, message: string): Promise<void> {
    const task = await repo.findTask(this.db, taskId)
    if (task && (task.status === 'queued' || task.status === 'running')) await this.endTask(task, 'failed', `The task could not be run: ${message}`)
  }

  /** Ends a cancelled VPS when its date has come (the job is queued at cancellation; an undo makes it a no-op). */
  async expire(vpsId: number): Promise<{ expired: boolean }> {
    const v = await repo.findVpsForJob(this.db, vpsId)
    if (!v || !v.cancellation_date || v.status === 'terminated') return { expired: false }
    if (v.cancellation_date > ymd(this.now())) return { expired: false }
    if (v.task_id !== null) throw new Error('VPS busy; retrying the expiry later')
    for (const f of await repo.floatingIpsOfVps(this.db, v.id)) {
      await this.hypervisor.routeFloatingIp(f.ip, null)
      await repo.setFloatingIpTarget(this.db, v.account_id, f.id, null)
    }
    await this.hypervisor.destroyInstance(v.instance_ref)
    await repo.deleteAttachmentsOfVps(this.db, v.id)
    await repo.updateVps(this.db, v.account_id, v.id, { status: 'terminated', rescue: 0, updated_at: iso(this.now()) })
    return { expired: true }
  }

  // ---- Provisioning -----------------------------------------------------------------------------

  /** Checks an order's input; returns the product, the billing period and the SSH keys. */
  async checkOrder(accountId: number, input: ProvisionInput) {
    const product = findProduct(input.productId)
    if (!product) throw errors.vpsUnknownProduct()
    if (!(await this.hypervisor.listImages()).some((i) => i.id === input.imageId)) throw errors.vpsUnknownImage()
    const hostname = input.hostname.trim().replace(/\.$/, '').toLowerCase()
    if (!isHostname(hostname)) throw errors.vpsInvalidHostname()
    const location = input.location ?? product.locations[0]
    if (!product.locations.includes(location)) throw errors.vpsUnknownLocation(product.locations)
    const months = input.billingMonths ?? 1
    if (!(VPS_DURATIONS as readonly number[]).includes(months)) throw errors.badRequest(`Invalid duration: one of ${VPS_DURATIONS.join(', ')} months`)
    const keys = await this.sshKeysByIds(accountId, input.sshKeyIds ?? [])
    return { product, hostname, location, months, keys }
  }

  /** Creates a VPS: allocates the instance on the hypervisor and queues the install task. */
  async provision(accountId: number, input: ProvisionInput): Promise<{ vpsId: number; taskId: number }> {
    const { product, hostname, location, months, keys } = await this.checkOrder(accountId, input)
    const created = await this.callDriver(() => this.hypervisor.createInstance({
      location, host: input.host, imageId: input.imageId, hostname, cpu: product.cpu, memoryMb: product.memory_mb,
      diskGb: product.disk_gb, rootPassword: newPassword(), sshKeys: keys,
    }))
    const now = iso(this.now())
    const ids = await this.db.transaction().execute(async (trx) => {
      const v = await repo.insertVps(trx, {
        account_id: accountId, name: input.name ?? hostname.split('.')[0], hostname, product_id: product.id, location,
        host: created.host, instance_ref: created.ref, image_id: input.imageId, cpu: product.cpu, memory_mb: product.memory_mb,
        disk_gb: product.disk_gb, status: 'installing', rescue: 0, ipv4: created.ipv4, ipv6: created.ipv6, reverse_dns: '{}',
        firewall: JSON.stringify({ enabled: false, rules: [] }), billing_months: months, task_id: null, cancellation_date: null,
        order_item_id: input.orderItemId ?? null,
        created_at: now, updated_at: now,
      })
      const t = await repo.insertTask(trx, {
        vps_id: v.id, account_id: accountId, action: 'create', status: 'queued', progress: 0, attempts: 0, params: '{}',
        previous_status: 'installing', operation_ref: created.operation.ref, created_at: now, updated_at: now,
      })
      await repo.holdVps(trx, accountId, v.id, t.id, 'installing', now)
      return { vpsId: v.id, taskId: t.id }
    })
    const jobId = await this.jobs.enqueue(TASK_JOB, { taskId: ids.taskId }, { accountId, maxAttempts: 3 })
    await repo.updateTask(this.db, ids.taskId, { job_id: jobId })
    return ids
  }

  /** The orders module's processor for `vps` items: provisions the ordered VPS; a refusal becomes the item's error. */
  async processOrderItem(item: { id: number; accountId: number; details: unknown }): Promise<{ errors: Array<{ code: string; description: string }>; result?: unknown }> {
    const done = await repo.findVpsByOrderItem(this.db, item.accountId, item.id)
    if (done) return { errors: [], result: { vps_id: done.id } }
    try {
      const r = await this.provision(item.accountId, { ...(item.details as ProvisionInput), orderItemId: item.id })
      return { errors: [], result: { vps_id: r.vpsId } }
    } catch (err) {
      if (err instanceof ApiError && err.status === 400) return { errors: [{ code: 'vps', description: err.message }] }
      throw err
    }
  }

  products() {
    return VPS_PRODUCTS.map((p) => ({
      id: p.id, name: p.name, cpu: p.cpu, memory_mb: p.memory_mb, disk_gb: p.disk_gb,
      price: p.priceCents / 100, locations: [...p.locations], durations: [...VPS_DURATIONS],
    }))
  }

  // ---- SSH keys ---------------------------------------------------------------------------------

  async listSshKeys(accountId: number) {
    return (await repo.listSshKeys(this.db, accountId)).map(sshKeyView)
  }

  /** Adds a public key: ssh-ed25519, ecdsa or ssh-rsa of at least 2048 bits; the same key twice → 400. */
  async addSshKey(accountId: number, name: string, publicKey: string) {
    const text = publicKey.trim()
    if (!name.trim()) throw errors.badRequest('Missing name')
    let key: sshpk.Key
    try {
      if (text.includes('\n')) throw new Error('several lines')
      key = sshpk.parseKey(text, 'ssh')
    } catch {
      throw errors.sshKeyInvalid()
    }
    if (!['ed25519', 'ecdsa', 'rsa'].includes(key.type)) throw errors.sshKeyType()
    if (key.type === 'rsa' && key.size < 2048) throw errors.sshKeyTooShort()
    const fingerprint = key.fingerprint('sha256').toString()
    if (await repo.findSshKeyByFingerprint(this.db, accountId, fingerprint)) throw errors.sshKeyDuplicate()
    try {
      const row = await repo.insertSshKey(this.db, {
        account_id: accountId, name: name.trim(), public_key: text, fingerprint, key_type: key.type, bits: key.size, created_at: iso(this.now()),
      })
      return sshKeyView(row)
    } catch (err) {
      if (isUniqueViolation(err)) throw errors.sshKeyDuplicate()
      throw err
    }
  }

  async deleteSshKey(accountId: number, rawId: string) {
    const id = /^\d{1,15}$/.test(rawId) ? Number(rawId) : NaN
    if (Number.isNaN(id) || !(await repo.deleteSshKey(this.db, accountId, id))) throw errors.sshKeyNotFound()
  }

  private async sshKeysByIds(accountId: number, ids: number[]): Promise<string[]> {
    const rows = await repo.findSshKeys(this.db, accountId, ids)
    for (const id of ids) if (!rows.some((r) => r.id === id)) throw errors.sshKeyUnknown(id)
    return rows.map((r) => r.public_key)
  }

  // ---- Firewall ---------------------------------------------------------------------------------

  async getFirewall(accountId: number, rawId: string): Promise<FirewallConfig> {
    const v = await this.owned(accountId, rawId)
    return JSON.parse(v.firewall) as FirewallConfig
  }

  async setFirewall(accountId: number, rawId: string, enabled: boolean, rules: FirewallRuleInput[]): Promise<FirewallConfig> {
    const v = await this.owned(accountId, rawId)
    const firewall = normaliseFirewall(enabled, rules)
    if (v.status === 'terminated') throw errors.vpsWrongState(refusal('terminated', 'hostname')!)
    await this.callDriver(() => this.hypervisor.setFirewall(v.instance_ref, firewall))
    await repo.updateVps(this.db, accountId, v.id, { firewall: JSON.stringify(firewall), updated_at: iso(this.now()) })
    return firewall
  }

  // ---- VPC and subnets --------------------------------------------------------------------------

  async getVpc(accountId: number, rawId: string) {
    const v = await this.owned(accountId, rawId)
    const vpc = await repo.findVpcOnHost(this.db, accountId, v.host)
    if (!vpc) throw errors.vpcNotFound()
    return this.vpcView(accountId, vpc)
  }

  /** Creates the account's VPC on the VPS's host (one per host per account). */
  async createVpc(accountId: number, rawId: string, name: string) {
    const v = await this.owned(accountId, rawId)
    if (!name.trim()) throw errors.badRequest('Missing name')
    if (await repo.findVpcOnHost(this.db, accountId, v.host)) throw errors.vpcExists()
    try {
      const vpc = await repo.insertVpc(this.db, { account_id: accountId, name: name.trim(), host: v.host, created_at: iso(this.now()) })
      return this.vpcView(accountId, vpc)
    } catch (err) {
      if (isUniqueViolation(err)) throw errors.vpcExists()
      throw err
    }
  }

  /** Adds a subnet to the VPC on the VPS's host, filling the gateway and DHCP range from the CIDR when omitted. */
  async addSubnet(accountId: number, rawId: string, input: SubnetInput & { name?: string }) {
    const v = await this.owned(accountId, rawId)
    const vpc = await repo.findVpcOnHost(this.db, accountId, v.host)
    if (!vpc) throw (await repo.countVpcs(this.db, accountId)) > 0 ? errors.vpcOtherHost() : errors.vpcNotFound()
    const existing = await repo.listSubnets(this.db, accountId, vpc.id)
    const plan = planSubnet(input, existing)
    const row = await repo.insertSubnet(this.db, {
      vpc_id: vpc.id, account_id: accountId, name: input.name?.trim() || plan.cidr, cidr: plan.cidr, gateway: plan.gateway,
      dhcp_start: plan.dhcpStart, dhcp_end: plan.dhcpEnd, created_at: iso(this.now()),
    })
    return subnetView(row)
  }

  /** Attaches the VPS to a subnet of its host's VPC and returns its address from the DHCP range. */
  async attachSubnet(accountId: number, rawId: string, rawSubnetId: string) {
    const v = await this.owned(accountId, rawId)
    const subnet = /^\d{1,15}$/.test(rawSubnetId) ? await repo.findSubnet(this.db, accountId, Number(rawSubnetId)) : undefined
    if (!subnet) throw errors.subnetNotFound()
    if (subnet.host !== v.host) throw errors.vpcOtherHost()
    if (v.status === 'terminated') throw errors.vpsWrongState(refusal('terminated', 'hostname')!)
    for (let attempt = 0; ; attempt++) {
      const taken = await repo.attachmentsOfSubnet(this.db, subnet.id)
      const mine = taken.find((a) => a.vps_id === v.id)
      if (mine) return { vps_id: v.id, subnet_id: subnet.id, address: mine.address, cidr: subnet.cidr, gateway: subnet.gateway }
      const address = firstFreeAddress(subnet, taken.map((a) => a.address))
      if (!address) throw errors.subnetFull()
      try {
        await repo.insertAttachment(this.db, { subnet_id: subnet.id, vps_id: v.id, address, created_at: iso(this.now()) })
      } catch (err) {
        if (isUniqueViolation(err) && attempt < 5) continue
        throw err
      }
      await this.callDriver(() => this.hypervisor.attachNetwork(v.instance_ref, { networkId: subnet.id, cidr: subnet.cidr, gateway: subnet.gateway, address }))
      return { vps_id: v.id, subnet_id: subnet.id, address, cidr: subnet.cidr, gateway: subnet.gateway }
    }
  }

  private async vpcView(accountId: number, vpc: { id: number; name: string; host: string; created_at: string }) {
    const subnets = await repo.listSubnets(this.db, accountId, vpc.id)
    return { id: vpc.id, name: vpc.name, host: vpc.host, created: ymdhm(new Date(vpc.created_at)), subnets: subnets.map(subnetView) }
  }

  // ---- Floating IPs -----------------------------------------------------------------------------

  async listFloatingIps(accountId: number) {
    return (await repo.listFloatingIps(this.db, accountId)).map(floatingView)
  }

  async reserveFloatingIp(accountId: number, location: string) {
    const locations = [...new Set((await this.hypervisor.listHosts()).map((h) => h.location))]
    if (!locations.includes(location)) throw errors.badRequest(`Invalid location: one of ${locations.join(', ')}`)
    const ip = await this.callDriver(() => this.hypervisor.reserveFloatingIp(location))
    return floatingView(await repo.insertFloatingIp(this.db, { account_id: accountId, ip, location, created_at: iso(this.now()) }))
  }

  async attachFloatingIp(accountId: number, rawId: string, vpsId: number) {
    const f = await this.floating(accountId, rawId)
    const v = await this.owned(accountId, String(vpsId))
    if (f.vps_id !== null && f.vps_id !== v.id) throw errors.floatingIpAttached()
    if (f.location !== v.location) throw errors.floatingIpLocation()
    if (v.status === 'terminated') throw errors.vpsWrongState(refusal('terminated', 'hostname')!)
    await this.callDriver(() => this.hypervisor.routeFloatingIp(f.ip, v.instance_ref))
    await repo.setFloatingIpTarget(this.db, accountId, f.id, v.id)
    return floatingView({ ...f, vps_id: v.id })
  }

  async detachFloatingIp(accountId: number, rawId: string) {
    const f = await this.floating(accountId, rawId)
    if (f.vps_id === null) throw errors.floatingIpNotAttached()
    await this.callDriver(() => this.hypervisor.routeFloatingIp(f.ip, null))
    await repo.setFloatingIpTarget(this.db, accountId, f.id, null)
    return floatingView({ ...f, vps_id: null })
  }

  async deleteFloatingIp(accountId: number, rawId: string) {
    const f = await this.floating(accountId, rawId)
    if (f.vps_id !== null) throw errors.floatingIpAttached()
    await this.callDriver(() => this.hypervisor.releaseFloatingIp(f.ip))
    await repo.deleteFloatingIp(this.db, accountId, f.id)
  }

  private async floating(accountId: number, rawId: string) {
    const f = /^\d{1,15}$/.test(rawId) ? await repo.findFloatingIp(this.db, accountId, Number(rawId)) : undefined
    if (!f) throw errors.floatingIpNotFound()
    return f
  }

  /** Turns a refusal of the hypervisor into a 400 that names it. */
  private async callDriver<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn()
    } catch (err) {
      if (err instanceof HypervisorError) throw errors.vpsActionFailed(err.message)
      throw err
    }
  }
}

/** The first end of a billing period (from `created`, every `months`) that is after `now`. */
export function periodEnd(created: Date, months: number, now: Date): Date {
  for (let n = 1; ; n++) {
    const d = new Date(created)
    d.setUTCMonth(d.getUTCMonth() + n * months)
    if (d > now) return d
  }
}

const taskView = (t: VpsTask): TaskView => ({
  id: t.id, action: t.action, status: t.status, progress: t.progress, created: ymdhm(new Date(t.created_at)), error: t.error,
})

const sshKeyView = (k: { id: number; name: string; public_key: string; fingerprint: string; key_type: string; bits: number; created_at: string }) => ({
  id: k.id, name: k.name, public_key: k.public_key, fingerprint: k.fingerprint, type: k.key_type, bits: k.bits, created: ymdhm(new Date(k.created_at)),
})

const subnetView = (s: { id: number; name: string; cidr: string; gateway: string; dhcp_start: string; dhcp_end: string; created_at: string }) => ({
  id: s.id, name: s.name, cidr: s.cidr, gateway: s.gateway, dhcp_start: s.dhcp_start, dhcp_end: s.dhcp_end, created: dmyhm(new Date(s.created_at)),
})

const floatingView = (f: { id: number; ip: string; location: string; vps_id: number | null; created_at: string }) => ({
  id: f.id, ip: f.ip, location: f.location, vps_id: f.vps_id, created: ymdhm(new Date(f.created_at)),
})
