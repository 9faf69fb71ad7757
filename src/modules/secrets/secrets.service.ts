import type { Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import { iso } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import { SecretBox, SecretBoxError, type SecretHolder } from '../../lib/secret-box.js'
import * as repo from './secrets.repository.js'

const CHECK_NAME = 'secret-key'
const CHECK_CONTEXT = 'secret_key_checks.secret-key'
const CHECK_TEXT = 'hostapi secret key check'

/**
 * Secrets at rest: the database holds a check value sealed with the secret key, so a process started with
 * another key stops at once; the holders (the built-in CA) keep their secrets sealed with it.
 */
export class SecretsService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock,
    private readonly box: SecretBox,
    private readonly holders: SecretHolder[],
  ) {}

  /**
   * At start: the key check opens (one is stored on a new database), every stored secret opens, and those
   * stored in plaintext (before this version) are sealed. Returns how many were sealed; throws SecretBoxError.
   */
  async verify(): Promise<number> {
    await repo.insertCheckIfAbsent(this.db, CHECK_NAME, this.box.seal(CHECK_TEXT, CHECK_CONTEXT), iso(this.clock.now()))
    await this.openCheck()
    let sealed = 0
    for (const h of this.holders) sealed += await h.resealSecrets(false)
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
    for (const h of this.holders) resealed += await h.resealSecrets(true)
    return resealed
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
