import type { Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import { iso, ymd } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import { errors } from '../../errors.js'
import { Type } from 'typebox'
import { defineJob, type JobRunner } from '../../jobs/runner.js'
import { crashPoint } from '../../ops/crash-points.js'
import type { HypervisorDriver } from '../../drivers/hypervisor/hypervisor.js'
import * as repo from './vps.repository.js'
import { isHostname } from './network-rules.js'
import { findImage, type ImageRef, newPassword, ownedVps, viaDriver } from './vps.common.js'
import type { DryRun } from '../../lib/dry-run.js'
import { TERMINATED_REFUSAL } from './vps.state.js'
import type { SshKeysService } from './ssh-keys.service.js'
import type { VpsTasks } from './vps-tasks.service.js'

/** The job that ends a cancelled VPS on its cancellation date. */
export const EXPIRE_JOB = 'vps.expire'

/** What VpsLifecycleService is built on. */
export interface VpsLifecycleServiceDeps {
  db: Kysely<DB>
  clock: Clock
  jobs: JobRunner
  hypervisor: HypervisorDriver
  tasks: VpsTasks
  sshKeys: SshKeysService
}

/** A VPS's life after ordering: rescue mode, reinstall, root password, hostname, cancellation and its end. */
export class VpsLifecycleService {
  private readonly db: Kysely<DB>
  private readonly clock: Clock
  private readonly jobs: JobRunner
  private readonly hypervisor: HypervisorDriver
  private readonly tasks: VpsTasks
  private readonly sshKeys: SshKeysService

  constructor(deps: VpsLifecycleServiceDeps) {
    this.db = deps.db
    this.clock = deps.clock
    this.jobs = deps.jobs
    this.hypervisor = deps.hypervisor
    this.tasks = deps.tasks
    this.sshKeys = deps.sshKeys
  }

  /** The job that ends a cancelled VPS at the end of its term. */
  readonly expireJob = defineJob({
    name: EXPIRE_JOB,
    payload: Type.Object({ vpsId: Type.Integer() }),
    handle: ({ vpsId }) => this.expire(vpsId),
  })

  private now() {
    return this.clock.now()
  }

  /** Enables (with a one-time root password for the rescue system) or disables rescue mode. */
  async rescue(accountId: number, rawId: string, enable: boolean, opts: DryRun = {}) {
    const v = await ownedVps(this.db, accountId, rawId)
    const password = enable ? newPassword() : null
    const task = await this.tasks.queue(v, enable ? 'rescue_on' : 'rescue_off', { password }, opts)
    return { task, rescue_password: password }
  }

  /** Reinstalls from an image; returns the new root password, shown only this once. */
  async reinstall(accountId: number, rawId: string, imageRef: ImageRef, sshKeyIds: number[] = [], opts: DryRun = {}) {
    const v = await ownedVps(this.db, accountId, rawId)
    this.tasks.assertActionable(v, 'reinstall')
    const imageId = findImage(await this.hypervisor.listImages(), imageRef).slug
    const keys = await this.sshKeys.publicKeys(accountId, sshKeyIds)
    const password = newPassword()
    const task = await this.tasks.queue(v, 'reinstall', { imageId, password, sshKeys: keys }, opts)
    return { task, root_password: password }
  }

  /** Sets a new root password in the running guest and returns it once. */
  async resetPassword(accountId: number, rawId: string, opts: DryRun = {}) {
    const v = await ownedVps(this.db, accountId, rawId)
    this.tasks.assertActionable(v, 'reset_password')
    const password = newPassword()
    if (!opts.dryRun) await viaDriver(() => this.hypervisor.setRootPassword(v.instance_ref, password))
    return { root_password: password }
  }

  /** Changes the hostname (RFC 1123). */
  async setHostname(accountId: number, rawId: string, hostname: string, opts: DryRun = {}) {
    const v = await ownedVps(this.db, accountId, rawId)
    const name = hostname.trim().replace(/\.$/, '').toLowerCase()
    if (!isHostname(name)) throw errors.vpsInvalidHostname()
    this.tasks.assertActionable(v, 'hostname')
    if (opts.dryRun) return { id: v.id, hostname: name }
    await viaDriver(() => this.hypervisor.setHostname(v.instance_ref, name))
    await repo.updateVps(this.db, accountId, v.id, { hostname: name, updated_at: iso(this.now()) })
    return { id: v.id, hostname: name }
  }

  /** Schedules the end of the VPS at the end of its current billing period. */
  async cancel(accountId: number, rawId: string, opts: DryRun = {}) {
    const v = await ownedVps(this.db, accountId, rawId)
    if (v.status === 'terminated') throw errors.vpsWrongState(TERMINATED_REFUSAL)
    if (v.cancellation_date) throw errors.vpsCancellationPending()
    const end = periodEnd(new Date(v.created_at), v.billing_months, this.now())
    const date = ymd(end)
    if (opts.dryRun) return { id: v.id, cancellation_date: date }
    await this.db.transaction().execute(async (trx) => {
      await repo.updateVps(trx, accountId, v.id, { cancellation_date: date, updated_at: iso(this.now()) })
      await this.jobs.enqueue(this.expireJob, { vpsId: v.id }, { trx, accountId, runAt: end })
    })
    crashPoint('vps.cancel.committed')
    this.jobs.poke()
    return { id: v.id, cancellation_date: date }
  }

  /** Undoes a pending cancellation. */
  async cancelDelete(accountId: number, rawId: string, opts: DryRun = {}) {
    const v = await ownedVps(this.db, accountId, rawId)
    if (!v.cancellation_date || v.status === 'terminated') throw errors.vpsNoCancellationPending()
    if (!opts.dryRun) {
      await repo.updateVps(this.db, accountId, v.id, { cancellation_date: null, updated_at: iso(this.now()) })
    }
    return { id: v.id, cancellation_date: null }
  }

  /** Ends a cancelled VPS when its date has come (the job is queued at cancellation; an undo makes it a no-op). */
  async expire(vpsId: number): Promise<{ expired: boolean }> {
    const v = await repo.findVpsForJob(this.db, vpsId)
    if (!v?.cancellation_date || v.status === 'terminated') return { expired: false }
    if (v.cancellation_date > ymd(this.now())) return { expired: false }
    // A task holds the VPS: look again in a minute rather than end it under the task.
    if (v.task_id !== null) {
      const runAt = new Date(this.now().getTime() + 60_000)
      // Caused by no change: the job looks again later (the runner's database, no transaction).
      await this.jobs.enqueue(this.expireJob, { vpsId }, { trx: this.db, accountId: v.account_id, runAt })
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
  const target = new Date(
    Date.UTC(
      from.getUTCFullYear(),
      from.getUTCMonth() + months,
      1,
      from.getUTCHours(),
      from.getUTCMinutes(),
      from.getUTCSeconds(),
    ),
  )
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate()
  target.setUTCDate(Math.min(from.getUTCDate(), lastDay))
  return target
}
