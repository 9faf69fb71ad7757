import type { Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import { iso } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import { SecretBox, SecretBoxError, type SealedColumn } from '../../lib/secret-box.js'
import { SEALED_COLUMNS } from './sealed-columns.js'
import * as repo from './secrets.repository.js'

const CHECK_NAME = 'secret-key'
const CHECK_CONTEXT = 'secret_key_checks.secret-key'
const CHECK_TEXT = 'hostapi secret key check'
// Rows read at once while checking or re-sealing a column.
const PAGE = 500

/** What SecretsService is built on. */
export interface SecretsServiceDeps {
  db: Kysely<DB>
  clock: Clock
  box: SecretBox
  columns?: readonly SealedColumn[]
}

/**
 * Secrets at rest: the database holds a check value sealed with the secret key, so a process started with
 * another key stops at once; every column of SEALED_COLUMNS holds values sealed with it, whatever drivers this
 * process has configured.
 */
export class SecretsService {
  private readonly db: Kysely<DB>
  private readonly clock: Clock
  private readonly box: SecretBox
  private readonly columns: readonly SealedColumn[]

  constructor(deps: SecretsServiceDeps) {
    this.db = deps.db
    this.clock = deps.clock
    this.box = deps.box
    this.columns = deps.columns ?? SEALED_COLUMNS
  }

  /**
   * At start: the key check opens (one is stored on a new database), every stored secret opens, and those
   * stored in plaintext (before this version) are sealed. Returns how many were sealed; throws SecretBoxError.
   */
  async verify(): Promise<number> {
    await repo.insertCheckIfAbsent(this.db, CHECK_NAME, this.box.seal(CHECK_TEXT, CHECK_CONTEXT), iso(this.clock.now()))
    await this.openCheck()
    let sealed = 0
    for (const col of this.columns) sealed += await this.reseal(col, false)
    return sealed
  }

  /** Re-seals the key check and every stored secret with the current key; returns how many secrets were rewritten. */
  async rotate(): Promise<number> {
    const check = await this.openCheck()
    if (check && !this.box.isCurrent(check)) {
      await repo.replaceCheck(
        this.db,
        CHECK_NAME,
        check,
        this.box.seal(CHECK_TEXT, CHECK_CONTEXT),
        iso(this.clock.now()),
      )
    }
    let resealed = 0
    for (const col of this.columns) resealed += await this.reseal(col, true)
    return resealed
  }

  /**
   * Opens every value of `col` (throws SecretBoxError on one that does not open), seals those in plaintext and,
   * with `rotate`, re-seals those sealed with another key. A value changed meanwhile by a request is left as it
   * is: that request sealed it with the current key.
   */
  private async reseal(col: SealedColumn, rotate: boolean): Promise<number> {
    let rewritten = 0
    for (let after = 0; ; ) {
      const page = await repo.sealedValues(this.db, col, after, PAGE)
      for (const { id, value, row } of page) {
        const context = col.context(row)
        const sealed = SecretBox.isSealed(value)
        const plain = sealed ? this.box.open(value, context) : value
        if (sealed && !(rotate && !this.box.isCurrent(value))) continue
        rewritten += await repo.replaceSealedValue(this.db, col, id, value, this.box.seal(plain, context))
      }
      if (page.length < PAGE) return rewritten
      after = page[page.length - 1].id
    }
  }

  /** The stored check value, after checking it opens with the configured keys. */
  private async openCheck(): Promise<string | null> {
    const row = await repo.findCheck(this.db, CHECK_NAME)
    if (!row) return null
    if (!SecretBox.isSealed(row.value) || this.box.open(row.value, CHECK_CONTEXT) !== CHECK_TEXT) {
      throw new SecretBoxError('The stored secret key check is not what hostapi stores there')
    }
    return row.value
  }
}
