import type { Insertable, Updateable } from 'kysely'
import type { Db } from '../../../db/database.js'
import type { TicketMessagesTable, TicketsTable } from '../account.tables.js'
import { contains } from '../../../db/search.js'

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

/** How many of the tickets in scope match `search`. */
export const countTickets = async (db: Db, scope: TicketScope, search?: string): Promise<number> => {
  const row = await searchable(db, scope, search)
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** Newest activity first. */
export const listTickets = (db: Db, scope: TicketScope, opts: { search?: string; limit: number; offset: number }) =>
  searchable(db, scope, opts.search)
    .selectAll()
    .orderBy('last_updated', 'desc')
    .orderBy('id', 'desc')
    .limit(opts.limit)
    .offset(opts.offset)
    .execute()
