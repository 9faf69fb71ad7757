import { replyEvent } from './ticket-events.js'
import { randomInt } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Clock } from '../../../clock.js'
import { iso, ymdhms } from '../../../clock.js'
import type { DB } from '../../../db/tables.js'
import { errors } from '../../../errors.js'
import type { Mailer } from '../../mail/mail.service.js'
import { crashPoint } from '../../../ops/crash-points.js'
import { pageOf, pagination } from '../../../lib/paging.js'
import { jsonObjectOf, jsonTextOf } from '../../../lib/json-text.js'
import type { IamService, Principal } from '../../iam/iam.service.js'
import type { Ticket, TicketMessage } from '../account.tables.js'
import type { ProfileService } from '../profile/profile.service.js'
import type { SanitisePool } from './sanitise-pool.js'
import * as repo from './tickets.repository.js'
import { emitEvent } from '../../webhooks/webhook-events.js'
import type { DryRun } from '../../../lib/dry-run.js'
import { InvariantError } from '../../../lib/invariant.js'

/** The departments a ticket can be opened for. */
export const DEPARTMENTS = ['support', 'administration', 'sales', 'public_cloud', 'microsoft_365'] as const
/** One of DEPARTMENTS. */
export type Department = (typeof DEPARTMENTS)[number]

const FIRST_TICKET_NUMBER = 100_000

const time = (isoText: string) => ymdhms(new Date(isoText))

/** What TicketsService is built on. */
export interface TicketsServiceDeps {
  db: Kysely<DB>
  clock: Clock
  mail: Mailer
  profiles: ProfileService
  iam: IamService
  supportAddress: string
  /** Sanitises long messages with markup off the event loop. */
  sanitiser: SanitisePool
}

/** Support tickets: customers open and answer them; the support side (operator, admin API) replies and closes. */
export class TicketsService {
  private readonly db: Kysely<DB>
  private readonly clock: Clock
  private readonly mail: Mailer
  private readonly profiles: ProfileService
  private readonly iam: IamService
  private readonly supportAddress: string
  private readonly sanitiser: SanitisePool

  constructor(deps: TicketsServiceDeps) {
    this.db = deps.db
    this.clock = deps.clock
    this.mail = deps.mail
    this.profiles = deps.profiles
    this.iam = deps.iam
    this.supportAddress = deps.supportAddress
    this.sanitiser = deps.sanitiser
  }

  /** Stops the sanitiser's worker thread. */
  stop(): Promise<void> {
    return this.sanitiser.close()
  }

  /**
   * The tickets `who` may open, newest activity first: a sub-user the ones it opened, the main user (and the
   * operator, with an account id) all of the account's.
   */
  async list(who: Principal | number, query: { page?: number; limit?: number; search?: string }) {
    const scope: repo.TicketScope =
      typeof who === 'number'
        ? { accountId: who }
        : { accountId: who.accountId, userId: who.isMainUser ? undefined : who.userId }
    const page = pageOf(query)
    const { total, items } = await repo.listTicketsJson(this.db, scope, { search: query.search, window: page })
    const pag = pagination(page, total)
    return jsonObjectOf([
      ['tickets', items],
      ['pagination', jsonTextOf(pag)],
    ])
  }

  /** One ticket with its thread, for a customer (`Access denied` when it may not open it) or the operator. */
  async get(who: Principal | number, ticketNumber: number) {
    return this.detail(await this.find(who, ticketNumber))
  }

  /**
   * The ticket `who` may open: another account's or an unknown number is `Ticket not found`; a ticket of the
   * account that a sub-user did not open itself is `Access denied` (the main user and the operator open all).
   */
  private async find(who: Principal | number, ticketNumber: number): Promise<Ticket> {
    const accountId = typeof who === 'number' ? who : who.accountId
    const ticket = await repo.findTicket(this.db, accountId, ticketNumber)
    if (!ticket) throw errors.ticketNotFound()
    if (typeof who !== 'number' && !who.isMainUser && ticket.user_id !== who.userId) throw errors.accessDenied()
    return ticket
  }

  /** Opens a ticket with its first message and tells the customer and the support desk. */
  async create(who: Principal, input: { subject: string; message: string; department: Department }, opts: DryRun = {}) {
    const { html: body, text } = await this.body(input.message)
    const user = await this.iam.findUser(who.accountId, who.userId)
    const author = user ? `${user.firstname} ${user.lastname}`.trim() : 'Customer'
    const subject = input.subject.replace(/[\r\n\t]+/g, ' ').trim()
    const now = iso(this.clock.now())
    const ticket = {
      account_id: who.accountId,
      subject,
      department: input.department,
      status: 'open',
      creator: author,
      user_id: who.userId,
      last_updated: now,
      created_at: now,
    }
    if (opts.dryRun) {
      const thread = [{ id: 0, ticket_id: 0, sender: 'user', author, body, created_at: now }]
      return this.detail({ id: 0, ticket_number: 0, ...ticket }, thread)
    }
    const ticketNumber = await this.db.transaction().execute(async (trx) => {
      // A placeholder until the number derived from the row id is set, so concurrent tickets never race for a number.
      const { id } = await repo.insertTicket(trx, { ...ticket, ticket_number: -randomInt(1, 2 ** 31 - 1) })
      const ticketNumber = FIRST_TICKET_NUMBER + id
      await repo.updateTicket(trx, id, { ticket_number: ticketNumber })
      await repo.insertMessage(trx, { ticket_id: id, sender: 'user', author, body, created_at: now })
      await this.mail.send(trx, {
        to: this.supportAddress,
        accountId: who.accountId,
        kind: 'ticket.created',
        subject: `[Ticket #${ticketNumber}] ${subject}`,
        text: `New ${input.department} ticket #${ticketNumber} from customer ${who.customerNumber} (${author}):\n\n${text}\n`,
      })
      if (user) {
        await this.mail.send(trx, {
          to: user.email,
          accountId: who.accountId,
          kind: 'ticket.created',
          subject: `[Ticket #${ticketNumber}] ${subject}`,
          text: `Hello ${user.firstname},\n\nWe received your ticket #${ticketNumber} and will answer it as soon as we can.\n\nYour message:\n\n${text}\n`,
        })
      }
      return ticketNumber
    })
    crashPoint('tickets.create.committed')
    return this.get(who, ticketNumber)
  }

  /** Adds the customer's reply; the ticket is open again and the support desk is told. */
  async reply(who: Principal, ticketNumber: number, message: string, opts: DryRun = {}) {
    const ticket = await this.find(who, ticketNumber)
    if (ticket.status === 'closed') throw errors.ticketClosed()
    const { html: body, text } = await this.body(message)
    const user = await this.iam.findUser(who.accountId, who.userId)
    const author = user ? `${user.firstname} ${user.lastname}`.trim() : 'Customer'
    const now = iso(this.clock.now())
    if (opts.dryRun) {
      const thread = [
        ...(await repo.messagesOf(this.db, ticket.account_id, ticket.id)),
        { id: 0, ticket_id: ticket.id, sender: 'user', author, body, created_at: now },
      ]
      return this.detail({ ...ticket, status: 'open', last_updated: now }, thread)
    }
    await this.db.transaction().execute(async (trx) => {
      await repo.insertMessage(trx, { ticket_id: ticket.id, sender: 'user', author, body, created_at: now })
      await repo.updateTicket(trx, ticket.id, { status: 'open', last_updated: now })
      await this.mail.send(trx, {
        to: this.supportAddress,
        accountId: who.accountId,
        kind: 'ticket.reply',
        subject: `[Ticket #${ticketNumber}] ${ticket.subject}`,
        text: `Customer ${who.customerNumber} (${author}) replied to ticket #${ticketNumber}:\n\n${text}\n`,
      })
    })
    return this.get(who, ticketNumber)
  }

  /** The support desk's answer (operator or admin API): the ticket becomes `answered` and the customer is mailed. */
  async supportReply(ticketNumber: number, input: { author: string; message: string; close?: boolean }) {
    const ticket = await repo.findTicketByNumber(this.db, ticketNumber)
    if (!ticket) throw errors.ticketNotFound()
    const { html: body, text } = await this.body(input.message)
    const now = iso(this.clock.now())
    const to = await this.customerAddress(ticket)
    await this.db.transaction().execute(async (trx) => {
      await repo.insertMessage(trx, {
        ticket_id: ticket.id,
        sender: 'support',
        author: input.author,
        body,
        created_at: now,
      })
      await repo.updateTicket(trx, ticket.id, { status: input.close ? 'closed' : 'answered', last_updated: now })
      const reply = replyEvent(ticket, input.author, body)
      // A sub-user reads only the tickets it opened.
      await emitEvent(trx, ticket.account_id, 'ticket.replied', reply, new Date(now), { readerId: ticket.user_id })
      await this.mail.send(trx, {
        to,
        accountId: ticket.account_id,
        kind: 'ticket.answered',
        subject: `[Ticket #${ticketNumber}] ${ticket.subject}`,
        text: `${input.author} answered your ticket #${ticketNumber}:\n\n${text}\n\nReply with POST /api/v2/account/tickets/${ticketNumber}/reply.\n`,
      })
    })
    return this.get(ticket.account_id, ticketNumber)
  }

  /** Closes a ticket (support side). */
  async close(ticketNumber: number): Promise<void> {
    const ticket = await repo.findTicketByNumber(this.db, ticketNumber)
    if (!ticket) throw errors.ticketNotFound()
    await repo.updateTicket(this.db, ticket.id, { status: 'closed', last_updated: iso(this.clock.now()) })
  }

  /** A message as safe HTML and as plain text: 400 when it shows no text at all. */
  private async body(message: string): Promise<{ html: string; text: string }> {
    const [sanitised] = await this.sanitiser.sanitise([message], true)
    const text = sanitised?.text
    if (sanitised === undefined || text == null)
      throw new InvariantError('the sanitiser gave no plain text of a message')
    if (text.replace(/\u00a0/g, ' ').trim() === '') throw errors.emptyMessage()
    return { html: sanitised.html, text }
  }

  private async customerAddress(ticket: Ticket): Promise<string> {
    const user = ticket.user_id === null ? undefined : await this.iam.findUser(ticket.account_id, ticket.user_id)
    return user?.email ?? (await this.profiles.row(ticket.account_id)).email
  }

  private async detail(ticket: Ticket, thread?: TicketMessage[]) {
    const messages = thread ?? (await repo.messagesOf(this.db, ticket.account_id, ticket.id))
    // Sanitised again on the way out: rows written before a policy change are never served unsafe.
    const bodies = await this.sanitiser.sanitise(
      messages.map((m) => m.body),
      false,
    )
    return {
      ticket_number: ticket.ticket_number,
      subject: ticket.subject,
      status: ticket.status,
      department: ticket.department,
      creator: ticket.creator,
      created: time(ticket.created_at),
      last_updated: time(ticket.last_updated),
      thread: messages.map((m: TicketMessage, i) => ({
        created: time(m.created_at),
        from: m.sender,
        author: m.author,
        body: bodies[i].html,
      })),
    }
  }
}
