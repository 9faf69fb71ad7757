import type { Kysely } from 'kysely'
import { ymdhm } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import { errors } from '../../errors.js'
import type { HypervisorDriver } from '../../drivers/hypervisor/hypervisor.js'
import { ownedVps } from './vps.common.js'
import type { DryRun } from '../../lib/dry-run.js'
import type { TaskView, VpsTasks } from './vps-tasks.service.js'

/** What VpsBackupsService is built on. */
export interface VpsBackupsServiceDeps {
  db: Kysely<DB>
  hypervisor: HypervisorDriver
  tasks: VpsTasks
}

/** A VPS's backups: the hypervisor's list, and the backup and restore tasks. */
export class VpsBackupsService {
  private readonly db: Kysely<DB>
  private readonly hypervisor: HypervisorDriver
  private readonly tasks: VpsTasks

  constructor(deps: VpsBackupsServiceDeps) {
    this.db = deps.db
    this.hypervisor = deps.hypervisor
    this.tasks = deps.tasks
  }

  /** The VPS's backups as the hypervisor lists them; none once the VPS has ended. */
  async list(accountId: number, rawId: string) {
    const v = await ownedVps(this.db, accountId, rawId)
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

  /** What, besides the database, the lists depend on (see HypervisorDriver.backupsVersion). */
  listVersion(): string | null {
    return this.hypervisor.backupsVersion()
  }

  /** Queues a manual backup. */
  async create(accountId: number, rawId: string, opts: DryRun = {}): Promise<TaskView> {
    const v = await ownedVps(this.db, accountId, rawId)
    return this.tasks.queue(v, 'backup', {}, opts)
  }

  /** Queues the restore of a backup the hypervisor lists (by key, and type when given). */
  async restore(accountId: number, rawId: string, key: number, type?: string, opts: DryRun = {}): Promise<TaskView> {
    const v = await ownedVps(this.db, accountId, rawId)
    this.tasks.assertActionable(v, 'restore')
    const backups = await this.hypervisor.listBackups(v.instance_ref)
    if (!backups.some((b) => b.key === key && (type === undefined || b.type === type))) throw errors.vpsBackupNotFound()
    return this.tasks.queue(v, 'restore', { key }, opts)
  }
}
