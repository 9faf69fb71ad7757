import type { Kysely } from 'kysely'
import type { MailMessage } from './mail.js'
import type { OutboxStatus, OutboxTables } from './outbox.tables.js'

/** The mail drivers' handle: the outbox alone. */
export type OutboxDb = Kysely<OutboxTables>

/** Writes one message to the outbox with what became of it; resolves with its id. */
export async function insertOutboxMessage(
  db: OutboxDb,
  m: MailMessage,
  row: { sender: string; createdAt: string; status?: OutboxStatus; statusDetail?: string | null },
): Promise<number> {
  const inserted = await db
    .insertInto('outbox')
    .values({
      account_id: m.accountId ?? null,
      kind: m.kind,
      sender: row.sender,
      recipient: m.to,
      subject: m.subject,
      text_body: m.text,
      html_body: m.html ?? null,
      ...(row.status ? { status: row.status, status_detail: row.statusDetail ?? null } : {}),
      created_at: row.createdAt,
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  return inserted.id
}

/** The newest messages first, optionally only those to one recipient. */
export function listOutbox(db: OutboxDb, opts: { to?: string; limit?: number }) {
  let q = db
    .selectFrom('outbox')
    .selectAll()
    .orderBy('id', 'desc')
    .limit(opts.limit ?? 50)
  if (opts.to) q = q.where('recipient', '=', opts.to)
  return q.execute()
}

/** Deletes the messages written before `cutoff`; resolves with how many. */
export const deleteOutboxBefore = async (db: OutboxDb, cutoff: string): Promise<number> =>
  Number((await db.deleteFrom('outbox').where('created_at', '<', cutoff).executeTakeFirst()).numDeletedRows)
