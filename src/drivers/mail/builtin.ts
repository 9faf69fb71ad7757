import type { Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import { iso } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import { checkMessage, type MailDriver, type MailMessage } from './mail.js'

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
    const row = await this.db
      .insertInto('outbox')
      .values({
        account_id: m.accountId ?? null,
        kind: m.kind,
        sender: this.from,
        recipient: m.to,
        subject: m.subject,
        text_body: m.text,
        html_body: m.html ?? null,
        created_at: iso(this.clock.now()),
      })
      .returning('id')
      .executeTakeFirstOrThrow()
    return { id: String(row.id) }
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
