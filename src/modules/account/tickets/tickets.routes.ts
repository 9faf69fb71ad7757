import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { ok } from '../../../http/schemas.js'
import { okJson, sendJson } from '../../../http/json-reply.js'
import { errorsFor, PAGED } from '../../../http/error-responses.js'
import { DryRunQuery, dry } from '../../../http/dry-run.js'
import {
  CreateTicketBody,
  ReplyTicketBody,
  TicketDetail,
  TicketList,
  TicketListQuery,
  TicketParams,
} from './tickets.schemas.js'
import { errors } from '../../../errors.js'

/** Support tickets of the account. */
export const ticketsRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.get(
    '/account/tickets',
    {
      config: { area: 'account-tickets', cache: true },
      schema: {
        operationId: 'listTickets',
        tags: ['Account'],
        summary: 'List support tickets',
        description:
          'Newest activity first. `search` matches the subject or the ticket number, partially. A page past the last: 400 `Page out of range`. ' +
          'A sub-user sees the tickets it opened itself, the main user every ticket of the account.',
        querystring: TicketListQuery,
        response: { 200: TicketList, ...errorsFor('account-tickets', { 400: PAGED }) },
      },
    },
    async (req, reply) => sendJson(reply, okJson(await app.services.tickets.list(req.caller, req.query))),
  )

  app.get(
    '/account/tickets/:ticket_number',
    {
      config: { area: 'account-tickets', fixture: 'ticket', cache: true },
      schema: {
        operationId: 'getTicket',
        tags: ['Account'],
        summary: 'Get a support ticket with its thread',
        description:
          'A sub-user opens the tickets it opened itself, the main user every ticket of the account. ' +
          '403 `Access denied`: a ticket of the account opened by another user, or no `account-tickets` permission; ' +
          "404 `Ticket not found`: an unknown number or another account's ticket.",
        params: TicketParams,
        response: {
          200: TicketDetail,
          ...errorsFor('account-tickets', { 403: [errors.accessDenied()], 404: [errors.ticketNotFound()] }),
        },
      },
    },
    async (req) => ok(await app.services.tickets.get(req.caller, req.params.ticket_number)),
  )

  app.post(
    '/account/tickets',
    {
      config: { area: 'account-tickets' },
      schema: {
        operationId: 'createTicket',
        tags: ['Account'],
        summary: 'Open a support ticket',
        querystring: DryRunQuery,
        body: CreateTicketBody,
        response: { 200: TicketDetail, ...errorsFor('account-tickets', { 400: [errors.emptyMessage()] }) },
      },
    },
    async (req) => ok(await app.services.tickets.create(req.caller, req.body, dry(req)), 'Ticket created'),
  )

  app.post(
    '/account/tickets/:ticket_number/reply',
    {
      config: { area: 'account-tickets', fixture: 'ticketReply' },
      schema: {
        operationId: 'replyTicket',
        tags: ['Account'],
        summary: 'Reply to a support ticket',
        params: TicketParams,
        querystring: DryRunQuery,
        body: ReplyTicketBody,
        response: {
          200: TicketDetail,
          ...errorsFor('account-tickets', {
            400: [errors.ticketClosed(), errors.emptyMessage()],
            403: [errors.accessDenied()],
            404: [errors.ticketNotFound()],
          }),
        },
      },
    },
    async (req) =>
      ok(
        await app.services.tickets.reply(req.caller, req.params.ticket_number, req.body.message, dry(req)),
        'Reply added',
      ),
  )
}
