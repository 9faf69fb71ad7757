import type { Generated, Selectable } from 'kysely'

/** The built-in mail driver's outbox: every message it "sent", readable by the operator. */
export interface OutboxTables {
  outbox: OutboxTable
}

/** A row of `outbox`: one message the built-in mail driver accepted. */
export interface OutboxTable {
  id: Generated<number>
  account_id: number | null
  /** What the message is about (`ticket.created`, `profile.verify_email`, …). */
  kind: string
  sender: string
  recipient: string
  subject: string
  text_body: string
  html_body: string | null
  created_at: string
}

/** A stored outbox message. */
export type OutboxMessage = Selectable<OutboxTable>
