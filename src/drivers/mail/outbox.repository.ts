import type { Kysely } from 'kysely'
import type { DB } from '../../db/tables.js'
import type { MailMessage } from './mail.js'
import type { OutboxStatus } from './outbox.tables.js'

/** Writes one message to the outbox with what became of it; resolves with its id. */
export async function insertOutboxMessage(
  db: Kysely<DB>,
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
