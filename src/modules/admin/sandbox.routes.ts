import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import { errors } from '../../errors.js'
import { OkMessage, ok, okMessage } from '../../http/schemas.js'
import { adminErrors, errorsFor } from '../../http/error-responses.js'
import type { Sandbox } from '../../ops/sandbox.js'
import { type FaultInput, isWorkKind, WORK_KINDS } from '../../ops/faults.js'
import type { Static } from 'typebox'
import { IdParams } from './admin.schemas.js'
import * as S from './sandbox.schemas.js'
import { clockState, moveClock } from './sandbox.js'
import { EVENT_TYPES } from '../webhooks/webhook-events.js'

const tags = ['Sandbox']
const admin = { admin: true } as const

/** The sandbox of the context; these routes are registered only in sandbox mode. */
function sandboxOf(app: FastifyInstance): Sandbox {
  if (!app.ctx.ops.sandbox) throw errors.endpointNotFound()
  return app.ctx.ops.sandbox
}

/** Reset to the seed, and the sandbox clock. */
export const sandboxClockRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const sandbox = sandboxOf(app)

  app.post(
    '/sandbox/reset',
    {
      config: admin,
      schema: {
        operationId: 'sandboxReset',
        tags,
        summary:
          'Delete all account data and load the seed again (or the seed document in the body); reset the clock, faults and journal',
        body: S.ResetBody,
        response: { 200: S.ResetReply, ...adminErrors },
      },
    },
    async (req) => ok(await sandbox.reset(req.body ?? undefined), 'Sandbox reset'),
  )

  app.get(
    '/sandbox/clock',
    {
      config: admin,
      schema: {
        operationId: 'sandboxGetClock',
        tags,
        summary: 'The sandbox time',
        response: { 200: S.ClockReply, ...adminErrors },
      },
    },
    async () => ok(clockState(sandbox)),
  )

  app.post(
    '/sandbox/clock',
    {
      config: admin,
      schema: {
        operationId: 'sandboxMoveClock',
        tags,
        summary: 'Move the sandbox clock (advance or to); jobs that become due run before the answer',
        body: S.ClockBody,
        response: { 200: S.ClockReply, ...adminErrors },
      },
    },
    async (req) => {
      if ((req.body.advance === undefined) === (req.body.to === undefined)) throw errors.adminClockMove()
      return ok(await moveClock(sandbox, app.ctx.jobs, req.body))
    },
  )
}

/** The fields of a fault that shape an answer: a fault of asynchronous work has none. */
const ANSWER_FIELDS = ['status', 'latency_ms', 'key_prefix', 'retry_after', 'reset'] as const

/** A fault body checked: exactly one target, a known operation or work kind, no answer fields for work. */
function faultInput(app: FastifyInstance, body: Static<typeof S.FaultBody>): FaultInput {
  const { operation, work, ...rest } = body
  if ((operation === undefined) === (work === undefined)) throw errors.adminFaultTarget()
  if (operation !== undefined) {
    if (!app.ctx.ops.operations.has(operation)) throw errors.adminUnknownOperation(operation)
    return { operation, ...rest }
  }
  const kind = work as string
  if (!isWorkKind(kind)) throw errors.adminUnknownWork(kind, Object.keys(WORK_KINDS))
  const field = ANSWER_FIELDS.find((f) => rest[f] !== undefined)
  if (field) throw errors.adminWorkFaultField(field)
  return { work: kind, ...rest }
}

/** Fault injection into calls of the customer API and into asynchronous work. */
export const sandboxFaultRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const sandbox = sandboxOf(app)

  app.get(
    '/sandbox/faults',
    {
      config: admin,
      schema: {
        operationId: 'sandboxListFaults',
        tags,
        summary: 'List the injected faults',
        response: { 200: S.FaultsReply, ...adminErrors },
      },
    },
    async () => ok({ faults: sandbox.faults.list() }),
  )

  app.post(
    '/sandbox/faults',
    {
      config: admin,
      schema: {
        operationId: 'sandboxAddFault',
        tags,
        summary:
          'Inject a fault into calls of one customer operation, or into asynchronous work (a registration, a VPS task, a certificate issuance, a webhook delivery)',
        body: S.FaultBody,
        response: {
          200: S.FaultReply,
          ...adminErrors,
          ...errorsFor('', {
            400: [
              errors.adminFaultTarget(),
              errors.adminUnknownOperation('<operation>'),
              errors.adminUnknownWork('<work>', Object.keys(WORK_KINDS)),
              errors.adminWorkFaultField('<field>'),
            ],
          }),
        },
      },
    },
    async (req) => ok(sandbox.faults.add(faultInput(app, req.body)), 'Fault added'),
  )

  app.delete(
    '/sandbox/faults',
    {
      config: admin,
      schema: {
        operationId: 'sandboxClearFaults',
        tags,
        summary: 'Remove every fault',
        response: { 200: OkMessage, ...adminErrors },
      },
    },
    async () => {
      sandbox.faults.clear()
      return okMessage('Faults removed')
    },
  )

  app.delete(
    '/sandbox/faults/:id',
    {
      config: admin,
      schema: {
        operationId: 'sandboxRemoveFault',
        tags,
        summary: 'Remove one fault',
        params: IdParams,
        response: { 200: OkMessage, ...adminErrors },
      },
    },
    async (req) => {
      if (!sandbox.faults.remove(req.params.id)) throw errors.adminFaultNotFound()
      return okMessage('Fault removed')
    },
  )
}

/** The request journal: the last calls of the customer API. */
export const sandboxJournalRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const sandbox = sandboxOf(app)

  app.get(
    '/sandbox/journal',
    {
      config: admin,
      schema: {
        operationId: 'sandboxJournal',
        tags,
        summary:
          'The last calls of the customer API (method, path, headers, body; the answer status, headers, body and duration), oldest first',
        querystring: S.JournalQuery,
        response: { 200: S.JournalReply, ...adminErrors },
      },
    },
    async (req) =>
      ok({ entries: sandbox.journal.list(req.query.limit, req.query.after), clears: sandbox.journal.clears }),
  )

  app.delete(
    '/sandbox/journal',
    {
      config: admin,
      schema: {
        operationId: 'sandboxClearJournal',
        tags,
        summary: 'Empty the request journal',
        response: { 200: OkMessage, ...adminErrors },
      },
    },
    async () => {
      sandbox.journal.clear()
      return okMessage('Journal cleared')
    },
  )
}

/** Webhook events on demand. */
export const sandboxEventRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  sandboxOf(app)

  app.post(
    '/sandbox/events',
    {
      config: admin,
      schema: {
        operationId: 'sandboxTriggerEvent',
        tags,
        summary: "Send any webhook event to an account's endpoints, with the payload of its own resource",
        description:
          "The payload is what the event's real cause sends about the account's newest resource of the kind (a " +
          'domain for `domain.*` and `dns.*`, a VPS task, a certificate, an order item, an invoice, a ticket), or ' +
          "the document's example when it has none; `data` is merged over it. It goes to the endpoints subscribed " +
          'to the type whose owner may read it, as the real event would, and is delivered by the job queue.',
        body: S.TriggerEventBody,
        response: {
          200: S.TriggerEventReply,
          ...adminErrors,
          ...errorsFor('', {
            400: [
              errors.adminUnknownEventType('domain.renewed', EVENT_TYPES),
              errors.adminNameTheAccount(2),
              errors.adminNoAccount(),
            ],
            404: [errors.accountNotFound()],
          }),
        },
      },
    },
    async (req) => ok(await app.services.sandboxEvents.trigger(req.body), 'Event sent'),
  )
}

/** Sandbox controls (registered only in sandbox mode): reset to the seed, the clock, faults, the request journal, events. */
export const sandboxRoutes: readonly FastifyPluginAsync[] = [
  sandboxClockRoutes,
  sandboxFaultRoutes,
  sandboxJournalRoutes,
  sandboxEventRoutes,
]
