import type { Insertable } from 'kysely'
import { iso } from '../../clock.js'
import type { Backup } from './hypervisor.js'
import type { HvBackupsTable } from './builtin.tables.js'
import * as repo from './builtin.repository.js'
import type { HvDb } from './builtin.repository.js'

const NIGHTLY_HOUR_UTC = 3
const KEEP_INCREMENTALS = 7

/** Stores the manual backup an operation made; `createdAt` is when the operation ended. */
export async function insertManualBackup(
  trx: HvDb,
  instanceId: number,
  operationId: number,
  createdAt: string,
  at: Date,
): Promise<void> {
  const imageId = await repo.imageOf(trx, instanceId)
  // Two manual backups in the same second get consecutive tokens.
  for (let second = Math.floor(at.getTime() / 1000); ; second++) {
    const stored = await repo.insertBackupsIfAbsent(trx, [
      {
        instance_id: instanceId,
        type: 'manual',
        date_internal: String(second),
        size_mb: 1024 + ((instanceId * 7919 + operationId * 104729) % 6144),
        image_id: imageId,
        created_at: createdAt,
      },
    ])
    if (stored === 1) break
  }
}

const DAY = 86_400_000
const day = (d: Date) => Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate())

/**
 * The day (ms since the epoch, midnight UTC) of the newest nightly at `now`: today's once its hour has passed,
 * else yesterday's. The nightlies of every instance change only when it does.
 */
export function lastNightly(now: Date): number {
  return day(now) + NIGHTLY_HOUR_UTC * 3_600_000 <= now.getTime() ? day(now) : day(now) - DAY
}

/** The nightly incremental backups an instance has at `now`: those since it was created, the last seven at most. */
function nightliesDue(
  now: Date,
  row: { id: number; created_at: string; image_id: string },
): Insertable<HvBackupsTable>[] {
  const created = new Date(row.created_at)
  // Before the nightly hour the last seven run up to yesterday, so a list never holds fewer than seven.
  const last = lastNightly(now)
  const first = Math.max(day(created), last - (KEEP_INCREMENTALS - 1) * DAY)
  const due: Insertable<HvBackupsTable>[] = []
  for (let d = first; d <= last; d += DAY) {
    const at = new Date(d + NIGHTLY_HOUR_UTC * 3_600_000)
    if (at > now || at < created) continue
    const token = at.toISOString().slice(0, 10).replace(/-/g, '')
    due.push({
      instance_id: row.id,
      type: 'incremental',
      date_internal: token,
      size_mb: 128 + ((row.id * 31 + Number(token)) % 896),
      image_id: row.image_id,
      created_at: iso(at),
    })
  }
  return due
}

/** Stores the nightly incremental backups due at `now` that are missing, keeping the last seven. */
async function runNightlies(
  db: HvDb,
  now: Date,
  row: { id: number; created_at: string; image_id: string },
): Promise<void> {
  const due = nightliesDue(now, row)
  if (!due.length) return
  // The week in one statement, and pruning only after a new one.
  if ((await repo.insertBackupsIfAbsent(db, due)) === 0) return
  await repo.pruneIncrementals(db, row.id, KEEP_INCREMENTALS)
}

/**
 * The backups of the live instance `instanceId` at `now`, newest first, or undefined when there is none. One
 * statement reads the instance with its backups; only when a nightly due by now is missing (once a day per instance)
 * are the nightlies written and the list read again.
 */
export async function listWithNightlies(db: HvDb, now: Date, instanceId: number): Promise<Backup[] | undefined> {
  let rows = await repo.instanceBackups(db, instanceId)
  const first = rows[0]
  if (!first) return undefined
  const instance = { id: first.instanceId, created_at: first.instanceCreatedAt, image_id: first.instanceImageId }
  const held = new Set(rows.filter((r) => r.type === 'incremental').map((r) => r.date_internal))
  if (nightliesDue(now, instance).some((b) => !held.has(b.date_internal))) {
    await runNightlies(db, now, instance)
    rows = await repo.instanceBackups(db, instanceId)
  }
  const list: Backup[] = []
  for (const b of rows) {
    // The instance's row alone when it has no backup (the backup columns are NOT NULL otherwise).
    if (b.id === null || b.type === null || b.date_internal === null || b.created_at === null || b.size_mb === null)
      continue
    list.push({
      type: b.type,
      dateInternal: b.date_internal,
      key: b.id,
      createdAt: new Date(b.created_at),
      sizeMb: b.size_mb,
    })
  }
  return list
}
