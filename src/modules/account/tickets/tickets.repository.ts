import { sql, type Insertable, type Updateable } from 'kysely'
import type { Db } from '../../../db/database.js'
import type { TicketMessagesTable, TicketsTable } from '../account.tables.js'
import { containsPattern, matches } from '../../../db/search.js'
import { compiledOnce } from '../../../db/compiled.js'
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
export const findTicket = async (db: Db, accountId: number, ticketNumber: number) =>
  (await oneTicket(db, undefined, [accountId, ticketNumber])).at(0)

const oneTicket = compiledOnce((db: Db, _shape: undefined, [accountId, ticketNumber]: [number, number]) =>
  db.selectFrom('tickets').selectAll().where('account_id', '=', accountId).where('ticket_number', '=', ticketNumber),
)

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
export const messagesOf = (db: Db, accountId: number, ticketId: number) => thread(db, undefined, [accountId, ticketId])

const thread = compiledOnce((db: Db, _shape: undefined, [accountId, ticketId]: [number, number]) =>
  db
    .selectFrom('ticket_messages as m')
    .innerJoin('tickets as t', 't.id', 'm.ticket_id')
    .selectAll('m')
    .where('t.account_id', '=', accountId)
    .where('m.ticket_id', '=', ticketId)
    .orderBy('m.id'),
)

/** Which of the account's tickets a list shows: all, or (`userId`) those the user opened. */
export interface TicketScope {
  accountId: number
  userId?: number
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
  const pattern = opts.search ? containsPattern(opts.search) : undefined
  const values: (string | number)[] = [scope.accountId]
  if (scope.userId !== undefined) values.push(scope.userId)
  if (pattern) values.push(pattern)
  values.push(opts.window.offset, opts.window.limit)
  const shape = { user: scope.userId !== undefined, search: pattern === undefined ? 0 : pattern === null ? -1 : 1 }
  const [row] = await ticketList(db, shape, values)
  return { total: Number(row.total), items: asJsonText(row.items) }
}

/** listTicketsJson's statement: `search` 1 with a pattern, -1 matching nothing, 0 without. */
const ticketList = compiledOnce((db: Db, shape: { user: boolean; search: number }, values: (string | number)[]) => {
  const next = values.values()
  const value = () => next.next().value
  let q = db.selectFrom('tickets').where('account_id', '=', value() as number)
  if (shape.user) q = q.where('user_id', '=', value() as number)
  if (shape.search === 1) {
    const pattern = value()
    q = q.where((eb) =>
      eb.or([
        matches(sql`lower(${sql.ref('subject')})`, pattern),
        matches(sql`cast(${sql.ref('ticket_number')} as text)`, pattern),
      ]),
    )
  }
  if (shape.search === -1) q = q.where(sql<boolean>`1 = 0`)
  const rows = q.select([
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
  return db
    .selectFrom(rows.as('m'))
    .select([
      sql<string | number>`count(*)`.as('total'),
      sql<string>`${jsonArray(jsonWindow(item, sql.ref('m.n'), { offset: value(), limit: value() }))}`.as('items'),
    ])
})
