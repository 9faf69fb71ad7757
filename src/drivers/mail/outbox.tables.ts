import type { Generated, Selectable } from 'kysely'

/** The outbox: every message the mail driver stored (built-in) or tried to relay (SMTP), readable by the operator. */
export interface OutboxTables {
  outbox: OutboxTable
}

/** A row of `outbox`: one message the mail driver accepted. */
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
  /** `stored` (built-in driver: kept here, not delivered), `sent` (a relay accepted it) or `failed` (refused). */
  status: Generated<OutboxStatus>
  /** The relay's reply (`250 2.0.0 Ok: queued as …`, `550 5.1.1 No such user`); null for a stored message. */
  status_detail: string | null
  created_at: string
}

/** A stored outbox message. */
export type OutboxMessage = Selectable<OutboxTable>

/** What became of an outbox message. */
export type OutboxStatus = 'stored' | 'sent' | 'failed'
