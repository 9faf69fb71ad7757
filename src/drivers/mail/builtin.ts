import type { Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import { iso } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import { checkMessage, type MailDriver, type MailMessage } from './mail.js'
import { insertOutboxMessage } from './outbox.repository.js'

/**
 * The built-in mail driver: writes every message to the `outbox` table instead of sending it, so an
 * operator (or a relay of their choice) can read and forward it.
 */
export class OutboxMailDriver implements MailDriver {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock,
    private readonly from: string,
  ) {}

  async send(m: MailMessage): Promise<{ id: string }> {
    checkMessage(m)
    const id = await insertOutboxMessage(this.db, m, { sender: this.from, createdAt: iso(this.clock.now()) })
    return { id: String(id) }
  }

  /** The newest messages first, optionally only those to one recipient. */
  list(opts: { to?: string; limit?: number } = {}) {
    let q = this.db
      .selectFrom('outbox')
      .selectAll()
      .orderBy('id', 'desc')
      .limit(opts.limit ?? 50)
    if (opts.to) q = q.where('recipient', '=', opts.to)
    return q.execute()
  }
}
