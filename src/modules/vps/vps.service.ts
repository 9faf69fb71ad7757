import type { Kysely } from 'kysely'
import ipaddr from 'ipaddr.js'
import type { Clock } from '../../clock.js'
import { iso, ymd, ymdhm } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import { ApiError, errors } from '../../errors.js'
import { Type } from 'typebox'
import { defineJob, type JobRunner } from '../../jobs/runner.js'
import { HypervisorError, type HypervisorDriver, type Operation } from '../../drivers/hypervisor/hypervisor.js'
import * as repo from './vps.repository.js'
import type { Vps, VpsTask } from './vps.repository.js'
import { VPS_DURATIONS, VPS_PRODUCTS, findProduct } from './vps.catalog.js'
import { isHostname } from './network-rules.js'
import { newPassword, ownedVps, viaDriver, type DryRun } from './vps.common.js'
import { TRANSITIONAL, refusal, type TaskAction, type VpsAction } from './vps.state.js'
import { SshKeysService } from './ssh-keys.service.js'
import { VpsNetworkService } from './vps-network.service.js'

export const TASK_JOB = 'vps.task'
export const EXPIRE_JOB = 'vps.expire'

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

/** VPS instances: details, power and disk tasks with their state rules, backups, cancellation, provisioning. */
export class VpsService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock,
    private readonly jobs: JobRunner,
    private readonly hypervisor: HypervisorDriver,
    private readonly opts: { shutdownTimeoutSeconds: number },
  ) {
    this.sshKeys = new SshKeysService(db, clock)
    this.network = new VpsNetworkService(db, clock, hypervisor)
  }

  /** SSH keys of the account. */
  readonly sshKeys: SshKeysService
  /** Firewall, VPC, subnets and floating IPs. */
  readonly network: VpsNetworkService

  /** The job that runs one power, disk or provisioning task. */
  readonly taskJob = defineJob({
    name: TASK_JOB,
    payload: Type.Object({ taskId: Type.Integer() }),
    handle: async ({ taskId }, { job, attempt }) => {
      try {
        return await this.runTask(taskId)
      } catch (err) {
        // The last attempt failed on something unexpected (database, hypervisor API): end the task so the VPS is not held forever.
        if (attempt >= job.max_attempts) await this.abandonTask(taskId, err instanceof Error ? err.message : String(err))
        throw err
      }
    },
  })

  /** The job that ends a cancelled VPS at the end of its term. */
  readonly expireJob = defineJob({
    name: EXPIRE_JOB,
    payload: Type.Object({ vpsId: Type.Integer() }),
    handle: ({ vpsId }) => this.expire(vpsId),
  })

  private now() {
    return this.clock.now()
  }

  // ---- Instances ---------------------------------------------------------------------------------

  /** See ownedVps. */
  owned(accountId: number, rawId: string): Promise<Vps> {
    return ownedVps(this.db, accountId, rawId)
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
      repo.openTasks(this.db, v.account_id, [v.id]),
      repo.floatingIpsOfVps(this.db, v.account_id, v.id),
      repo.attachmentsOfVps(this.db, v.account_id, v.id),
      this.hypervisor.listImages(),
    ])
    const reverse = v.reverse_dns
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
  async updateReverseDns(accountId: number, rawId: string, entries: Array<{ ip: string; reverse: string }>, opts: DryRun = {}) {
    const v = await this.owned(accountId, rawId)
    if (v.status === 'terminated') throw errors.vpsWrongState(refusal('terminated', 'hostname')!)
    const floating = await repo.floatingIpsOfVps(this.db, v.account_id, v.id)
    const own = new Set([v.ipv4, v.ipv6, ...floating.map((f) => f.ip)].map((ip) => normaliseIp(ip)!))
    const changes: Array<{ ip: string; reverse: string }> = []
    for (const e of entries) {
      const ip = normaliseIp(e.ip)
      if (!ip || !own.has(ip)) throw errors.vpsIpNotOwned(e.ip)
      const name = e.reverse.trim().replace(/\.$/, '').toLowerCase()
      if (name !== '' && (!isHostname(name) || !name.includes('.'))) throw errors.vpsInvalidReverse(e.ip)
      changes.push({ ip, reverse: name })
    }
    const map = { ...v.reverse_dns }
    for (const c of changes) {
      if (!opts.dryRun) await viaDriver(() => this.hypervisor.setReverseDns(v.instance_ref, c.ip, c.reverse))
      if (c.reverse) map[c.ip] = c.reverse
      else delete map[c.ip]
    }
    if (opts.dryRun) return this.describe({ ...v, reverse_dns: map })
    await repo.updateVps(this.db, accountId, v.id, { reverse_dns: JSON.stringify(map), updated_at: iso(this.now()) })
    return this.describe((await repo.findVps(this.db, accountId, v.id))!)
  }

  /** Queues a power action: start, stop (graceful), poweroff (hard) or restart. */
  async power(accountId: number, rawId: string, action: 'start' | 'stop' | 'poweroff' | 'restart', opts: DryRun = {}): Promise<TaskView> {
    const v = await this.owned(accountId, rawId)
    return this.queueTask(v, action, {}, opts)
  }

  /** Enables (with a one-time root password for the rescue system) or disables rescue mode. */
  async rescue(accountId: number, rawId: string, enable: boolean, opts: DryRun = {}) {
    const v = await this.owned(accountId, rawId)
    const password = enable ? newPassword() : null
    const task = await this.queueTask(v, enable ? 'rescue_on' : 'rescue_off', { password }, opts)
    return { task, rescue_password: password }
  }

  /** Reinstalls from an image; returns the new root password, shown only this once. */
  async reinstall(accountId: number, rawId: string, imageId: string, sshKeyIds: number[] = [], opts: DryRun = {}) {
    const v = await this.owned(accountId, rawId)
    this.assertActionable(v, 'reinstall')
    if (!(await this.hypervisor.listImages()).some((i) => i.id === imageId)) throw errors.vpsUnknownImage()
    const keys = await this.sshKeys.publicKeys(accountId, sshKeyIds)
    const password = newPassword()
    const task = await this.queueTask(v, 'reinstall', { imageId, password, sshKeys: keys }, opts)
    return { task, root_password: password }
  }

  /** Sets a new root password in the running guest and returns it once. */
  async resetPassword(accountId: number, rawId: string, opts: DryRun = {}) {
    const v = await this.owned(accountId, rawId)
    this.assertActionable(v, 'reset_password')
    const password = newPassword()
    if (!opts.dryRun) await viaDriver(() => this.hypervisor.setRootPassword(v.instance_ref, password))
    return { root_password: password }
  }

  /** Changes the hostname (RFC 1123). */
  async setHostname(accountId: number, rawId: string, hostname: string, opts: DryRun = {}) {
    const v = await this.owned(accountId, rawId)
    const name = hostname.trim().replace(/\.$/, '').toLowerCase()
    if (!isHostname(name)) throw errors.vpsInvalidHostname()
    this.assertActionable(v, 'hostname')
    if (opts.dryRun) return { id: v.id, hostname: name }
    await viaDriver(() => this.hypervisor.setHostname(v.instance_ref, name))
    await repo.updateVps(this.db, accountId, v.id, { hostname: name, updated_at: iso(this.now()) })
    return { id: v.id, hostname: name }
  }

  /** Schedules the end of the VPS at the end of its current billing period. */
  async cancel(accountId: number, rawId: string, opts: DryRun = {}) {
    const v = await this.owned(accountId, rawId)
    if (v.status === 'terminated') throw errors.vpsWrongState(refusal('terminated', 'hostname')!)
    if (v.cancellation_date) throw errors.vpsCancellationPending()
    const end = periodEnd(new Date(v.created_at), v.billing_months, this.now())
    const date = ymd(end)
    if (opts.dryRun) return { id: v.id, cancellation_date: date }
    await repo.updateVps(this.db, accountId, v.id, { cancellation_date: date, updated_at: iso(this.now()) })
    await this.jobs.enqueue(this.expireJob, { vpsId: v.id }, { accountId, runAt: end })
    return { id: v.id, cancellation_date: date }
  }

  /** Undoes a pending cancellation. */
  async cancelDelete(accountId: number, rawId: string, opts: DryRun = {}) {
    const v = await this.owned(accountId, rawId)
    if (!v.cancellation_date || v.status === 'terminated') throw errors.vpsNoCancellationPending()
    if (!opts.dryRun) await repo.updateVps(this.db, accountId, v.id, { cancellation_date: null, updated_at: iso(this.now()) })
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

  async createBackup(accountId: number, rawId: string, opts: DryRun = {}) {
    const v = await this.owned(accountId, rawId)
    return this.queueTask(v, 'backup', {}, opts)
  }

  async restoreBackup(accountId: number, rawId: string, key: number, type?: string, opts: DryRun = {}) {
    const v = await this.owned(accountId, rawId)
    this.assertActionable(v, 'restore')
    const backups = await this.hypervisor.listBackups(v.instance_ref)
    if (!backups.some((b) => b.key === key && (type === undefined || b.type === type))) throw errors.vpsBackupNotFound()
    return this.queueTask(v, 'restore', { key }, opts)
  }

  // ---- Tasks ------------------------------------------------------------------------------------

  private assertActionable(v: Vps, action: VpsAction): void {
    if (v.task_id !== null) throw errors.vpsLocked()
    const text = refusal(v.status, action)
    if (text) throw errors.vpsWrongState(text)
  }

  /** Records a task, gives it the VPS (or refuses: locked / wrong state) and queues its job. */
  private async queueTask(v: Vps, action: Exclude<TaskAction, 'create'>, params: Record<string, unknown>, opts: DryRun = {}): Promise<TaskView> {
    this.assertActionable(v, action)
    if (opts.dryRun) return { id: 0, action, status: 'queued', progress: 0, created: ymdhm(this.now()), error: null }
    const now = iso(this.now())
    const task = await this.db.transaction().execute(async (trx) => {
      const t = await repo.insertTask(trx, {
        vps_id: v.id, account_id: v.account_id, action, status: 'queued', progress: 0, attempts: 0,
        params: JSON.stringify(params), previous_status: v.status, created_at: now, updated_at: now,
      })
      if (!(await repo.holdVps(trx, v.account_id, v.id, t.id, TRANSITIONAL[action] ?? v.status, now))) throw errors.vpsLocked()
      return t
    })
    const jobId = await this.jobs.enqueue(this.taskJob, { taskId: task.id }, {
      accountId: v.account_id,
      maxAttempts: 3,
    })
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
    const p = task.params
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
    const { password: _p, sshKeys: _k, ...kept } = task.params
    const vps = await repo.findVpsForJob(this.db, task.vps_id)
    let status = task.previous_status
    let image: string | undefined
    if (outcome === 'done') {
      const action = task.action as TaskAction
      if (action === 'start' || action === 'rescue_off' || action === 'reinstall' || action === 'create' || action === 'restore') status = 'running'
      else if (action === 'stop' || action === 'poweroff') status = 'stopped'
      else if (action === 'rescue_on') status = 'rescue'
      if (action === 'reinstall') image = task.params.imageId as string
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
    // A task holds the VPS: look again in a minute rather than end it under the task.
    if (v.task_id !== null) {
      const runAt = new Date(this.now().getTime() + 60_000)
      await this.jobs.enqueue(this.expireJob, { vpsId }, { accountId: v.account_id, runAt })
      return { expired: false }
    }
    for (const f of await repo.floatingIpsOfVps(this.db, v.account_id, v.id)) {
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
    if (!(VPS_DURATIONS as readonly number[]).includes(months)) throw errors.vpsInvalidDuration(VPS_DURATIONS)
    const keys = await this.sshKeys.publicKeys(accountId, input.sshKeyIds ?? [])
    return { product, hostname, location, months, keys }
  }

  /** Creates a VPS: allocates the instance on the hypervisor and queues the install task. */
  async provision(accountId: number, input: ProvisionInput): Promise<{ vpsId: number; taskId: number }> {
    const { product, hostname, location, months, keys } = await this.checkOrder(accountId, input)
    const created = await viaDriver(() => this.hypervisor.createInstance({
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
    const jobId = await this.jobs.enqueue(this.taskJob, { taskId: ids.taskId }, { accountId, maxAttempts: 3 })
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

}

/** The first end of a billing period (from `created`, every `months`) that is after `now`. */
export function periodEnd(created: Date, months: number, now: Date): Date {
  for (let n = 1; ; n++) {
    const d = addMonths(created, n * months)
    if (d > now) return d
  }
}

/** `months` later on the same day of the month, or the month's last day when it is shorter (31 Jan + 1 → 28/29 Feb). */
export function addMonths(from: Date, months: number): Date {
  const target = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth() + months, 1, from.getUTCHours(), from.getUTCMinutes(), from.getUTCSeconds()))
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate()
  target.setUTCDate(Math.min(from.getUTCDate(), lastDay))
  return target
}

const taskView = (t: VpsTask): TaskView => ({
  id: t.id, action: t.action, status: t.status, progress: t.progress, created: ymdhm(new Date(t.created_at)), error: t.error,
})

