import { Type } from 'typebox'
import { MAX_ID } from '../../../db/ids.js'
import { Envelope, PageQuery, Pagination } from '../../../http/schemas.js'
import { DEPARTMENTS } from './tickets.service.js'

/** The ticket number in the path. */
export const TicketParams = Type.Object({
  ticket_number: Type.Integer({ minimum: 1, maximum: MAX_ID, description: 'The ticket number' }),
})
/** `page`, `limit`, `search` of the ticket list. */
export const TicketListQuery = Type.Object(PageQuery)

const rowExample = {
  ticket_number: 100042,
  last_updated: '2026-03-02 09:15:00',
  subject: 'DNS not resolving',
  status: 'answered',
  creator: 'Jan Jansen',
  department: 'support',
}

/** The answer of `GET /account/tickets/`. */
export const TicketList = Envelope(
  Type.Object({
    tickets: Type.Array(
      Type.Object({
        ticket_number: Type.Integer(),
        last_updated: Type.String({ description: '`YYYY-MM-DD HH:MM:SS`' }),
        subject: Type.String(),
        status: Type.String({ description: '`open` (waiting for support), `answered` (waiting for you), `closed`' }),
        creator: Type.String(),
        department: Type.String(),
      }),
    ),
    pagination: Pagination,
  }),
  { tickets: [rowExample], pagination: { page: 1, limit: 25, total: 1, total_pages: 1 } },
)

/** A ticket with its thread: the answer of get, create and reply. */
export const TicketDetail = Envelope(
  Type.Object({
    ticket_number: Type.Integer(),
    subject: Type.String(),
    status: Type.String(),
    department: Type.String(),
    creator: Type.String(),
    created: Type.String({ description: '`YYYY-MM-DD HH:MM:SS`' }),
    last_updated: Type.String({ description: '`YYYY-MM-DD HH:MM:SS`' }),
    thread: Type.Array(
      Type.Object({
        created: Type.String({ description: '`YYYY-MM-DD HH:MM:SS`' }),
        from: Type.String({ description: '`user` or `support`' }),
        author: Type.String(),
        body: Type.String({ description: 'Sanitised HTML: no scripts, event handlers, styles or images' }),
      }),
    ),
  }),
  {
    ...rowExample,
    created: '2026-03-01 14:02:11',
    thread: [
      {
        created: '2026-03-01 14:02:11',
        from: 'user',
        author: 'Jan Jansen',
        body: '<p>example.nl does not resolve since this morning.</p>',
      },
      {
        created: '2026-03-02 09:15:00',
        from: 'support',
        author: 'Support desk',
        body: '<p>The zone is published again; please check.</p>',
      },
    ],
  },
)

const Message = Type.String({
  minLength: 1,
  maxLength: 65_536,
  description: 'Plain text or HTML; unsafe HTML (scripts, images, event handlers, `javascript:` links) is removed',
})

/** The body of `POST /account/tickets/`. */
export const CreateTicketBody = Type.Object(
  {
    subject: Type.String({ minLength: 1, maxLength: 200 }),
    message: Message,
    department: Type.Union(DEPARTMENTS.map((d) => Type.Literal(d))),
  },
  {
    examples: [
      {
        subject: 'DNS not resolving',
        message: 'example.nl does not resolve since this morning.',
        department: 'support',
      },
    ],
  },
)

/** The body of `POST /account/tickets/{ticket_number}/reply`. */
export const ReplyTicketBody = Type.Object(
  { message: Message },
  { examples: [{ message: 'It works again, thank you!' }] },
)
