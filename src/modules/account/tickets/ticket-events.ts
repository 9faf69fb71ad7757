import type { EventSamplers } from '../../webhooks/webhook-events.js'
import * as repo from './tickets.repository.js'

/** The data of `ticket.replied`: the ticket and support's answer (HTML, as the thread shows it). */
export const replyEvent = (ticket: { ticket_number: number; subject: string }, author: string, message: string) => ({
  ticket_number: ticket.ticket_number,
  subject: ticket.subject,
  author,
  message,
})

/**
 * `ticket.replied` from the account's newest ticket and support's last answer on it (or a short one when support
 * has not answered), narrowed to the user who opened it as support's replies are (sandbox triggers).
 */
export const ticketEventSamplers: EventSamplers = {
  'ticket.replied': async (db, accountId) => {
    const ticket = await repo.latestTicket(db, accountId)
    if (!ticket) return undefined
    const answer = (await repo.messagesOf(db, accountId, ticket.id)).filter((m) => m.sender === 'support').at(-1)
    const data = replyEvent(ticket, answer?.author ?? 'Support', answer?.body ?? '<p>We are looking into it.</p>')
    return { data, readerId: ticket.user_id }
  },
}
