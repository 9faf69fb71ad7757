import type { Clock } from '../../clock.js'
import { iso } from '../../clock.js'
import { checkMessage, type MailDriver, type MailMessage } from './mail.js'
import { insertOutboxMessage, listOutbox, type OutboxDb } from './outbox.repository.js'

/**
 * The built-in mail driver: writes every message to the `outbox` table instead of sending it, so an
 * operator (or a relay of their choice) can read and forward it.
 */
export class OutboxMailDriver implements MailDriver {
  constructor(
    private readonly db: OutboxDb,
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
    return listOutbox(this.db, opts)
  }
}
