import { sql, type Insertable, type Updateable } from 'kysely'
import type { Db } from '../../../db/database.js'
import type { TicketMessagesTable, TicketsTable } from '../account.tables.js'
import { contains } from '../../../db/search.js'
import { jsonArray, jsonInteger, jsonObject, jsonString, jsonWindow } from '../../../db/json-text.js'
import { asJsonText, type JsonText } from '../../../lib/json-text.js'

/** Support tickets and their threads. Every read of account data takes the account id. */

/** Inserts a ticket; returns its id. */
export const insertTicket = (db: Db, row: Insertable<TicketsTable>) =>
  db.insertInto('tickets').values(row).returning('id').executeTakeFirstOrThrow()

/** Changes a ticket (by row id, found through its account first). */
export const updateTicket = (db: Db, ticketId: number, changes: Updateable<TicketsTable>) =>
  db.updateTable('tickets').set(changes).where('id', '=', ticketId).execute()

/** Adds a message to a ticket thread. */
export const insertMessage = (db: Db, row: Insertable<TicketMessagesTable>) =>
  db.insertInto('ticket_messages').values(row).execute()

/** One ticket of the account by its number. */
export const findTicket = (db: Db, accountId: number, ticketNumber: number) =>
  db
    .selectFrom('tickets')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('ticket_number', '=', ticketNumber)
    .executeTakeFirst()

/** The account's newest ticket. */
export const latestTicket = (db: Db, accountId: number) =>
  db
    .selectFrom('tickets')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst()

/** For the support side, which answers tickets of every account. */
export const findTicketByNumber = (db: Db, ticketNumber: number) =>
  db.selectFrom('tickets').selectAll().where('ticket_number', '=', ticketNumber).executeTakeFirst()

/** The thread of one of the account's tickets, oldest first. */
export const messagesOf = (db: Db, accountId: number, ticketId: number) =>
  db
    .selectFrom('ticket_messages as m')
    .innerJoin('tickets as t', 't.id', 'm.ticket_id')
    .selectAll('m')
    .where('t.account_id', '=', accountId)
    .where('m.ticket_id', '=', ticketId)
    .orderBy('m.id')
    .execute()

/** Which of the account's tickets a list shows: all, or (`userId`) those the user opened. */
export interface TicketScope {
  accountId: number
  userId?: number
}

const searchable = (db: Db, scope: TicketScope, search: string | undefined) => {
  let q = db.selectFrom('tickets').where('account_id', '=', scope.accountId)
  if (scope.userId !== undefined) q = q.where('user_id', '=', scope.userId)
  if (search)
    q = q.where((eb) => eb.or([contains('subject', search), contains('ticket_number', search, { integer: true })]))
  return q
}

/**
 * The `tickets` of `GET /account/tickets` as JSON text built by the database (src/db/json-text.ts), in one
 * statement: the tickets in scope that match `search`, newest activity first, the page `window` of them, and how
 * many match in all (for the pagination). `last_updated` is stored as Date.toISOString writes it (UTC) and shown
 * as `YYYY-MM-DD HH:MM:SS`, its first 19 characters with the `T` a space.
 */
export async function listTicketsJson(
  db: Db,
  scope: TicketScope,
  opts: { search?: string; window: { offset: number; limit: number } },
): Promise<{ total: number; items: JsonText }> {
  const rows = searchable(db, scope, opts.search).select([
    'ticket_number',
    'last_updated',
    'subject',
    'status',
    'creator',
    'department',
    sql<number>`row_number() over (order by last_updated desc, id desc)`.as('n'),
  ])
  const item = jsonObject([
    ['ticket_number', jsonInteger(sql.ref('m.ticket_number'))],
    ['last_updated', jsonString(db, sql`replace(substr(${sql.ref('m.last_updated')}, 1, 19), 'T', ' ')`)],
    ['subject', jsonString(db, sql.ref('m.subject'))],
    ['status', jsonString(db, sql.ref('m.status'))],
    ['creator', jsonString(db, sql.ref('m.creator'))],
    ['department', jsonString(db, sql.ref('m.department'))],
  ])
  const row = await db
    .selectFrom(rows.as('m'))
    .select([
      sql<string | number>`count(*)`.as('total'),
      sql<string>`${jsonArray(jsonWindow(item, sql.ref('m.n'), opts.window))}`.as('items'),
    ])
    .executeTakeFirstOrThrow()
  return { total: Number(row.total), items: asJsonText(row.items) }
}
