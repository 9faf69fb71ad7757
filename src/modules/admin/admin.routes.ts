import { Type } from 'typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { ok } from '../../http/schemas.js'
import { adminErrors } from '../../http/error-responses.js'
import * as S from './admin.schemas.js'

const tags = (t: string) => [t]
const admin = { admin: true } as const

/** The operator's routes for accounts: list, create, get, suspend and unsuspend. */
export const adminAccountRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const svc = app.services.adminAccounts

  app.get(
    '/accounts',
    {
      config: admin,
      schema: {
        operationId: 'adminListAccounts',
        tags: tags('Accounts'),
        summary: 'List accounts (search on name, customer number or user e-mail)',
        querystring: S.AccountsQuery,
        response: { 200: S.AccountsReply, ...adminErrors },
      },
    },
    async (req) => ok(await svc.listAccounts(req.query)),
  )

  app.post(
    '/accounts',
    {
      config: admin,
      schema: {
        operationId: 'adminCreateAccount',
        tags: tags('Accounts'),
        summary: 'Create an account with its main user (and optionally an API key, shown once)',
        body: S.CreateAccountBody,
        response: { 200: S.CreatedAccountReply, ...adminErrors },
      },
    },
    async (req) => {
      const b = req.body
      return ok(
        await svc.createAccount({
          name: b.name,
          email: b.email,
          firstname: b.firstname,
          lastname: b.lastname,
          key: b.key
            ? { label: b.key.label, expiresAt: b.key.expires_at ?? null, allowedIps: b.key.allowed_ips }
            : undefined,
        }),
        'Account created',
      )
    },
  )

  app.get(
    '/accounts/:customer_number',
    {
      config: admin,
      schema: {
        operationId: 'adminGetAccount',
        tags: tags('Accounts'),
        summary: 'Get an account with its users and API keys',
        params: S.CustomerNumberParams,
        response: { 200: S.AccountDetailReply, ...adminErrors },
      },
    },
    async (req) => ok(await svc.getAccount(req.params.customer_number)),
  )

  app.put(
    '/accounts/:customer_number/suspend',
    {
      config: admin,
      schema: {
        operationId: 'adminSuspendAccount',
        tags: tags('Accounts'),
        summary: 'Suspend an account: its keys answer 401 until it is unsuspended',
        params: S.CustomerNumberParams,
        response: { 200: S.AccountReply, ...adminErrors },
      },
    },
    async (req) => ok(await svc.setSuspended(req.params.customer_number, true), 'Account suspended'),
  )

  app.put(
    '/accounts/:customer_number/unsuspend',
    {
      config: admin,
      schema: {
        operationId: 'adminUnsuspendAccount',
        tags: tags('Accounts'),
        summary: 'Lift the suspension of an account',
        params: S.CustomerNumberParams,
        response: { 200: S.AccountReply, ...adminErrors },
      },
    },
    async (req) => ok(await svc.setSuspended(req.params.customer_number, false), 'Account unsuspended'),
  )
}

/** Sub-users and API keys of an account. */
export const adminKeyRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const svc = app.services.adminAccounts
  app.post(
    '/accounts/:customer_number/users',
    {
      config: admin,
      schema: {
        operationId: 'adminCreateUser',
        tags: tags('Users and keys'),
        summary: 'Create a sub-user with permissions',
        params: S.CustomerNumberParams,
        body: S.CreateUserBody,
        response: { 200: S.UserReply, ...adminErrors },
      },
    },
    async (req) => ok(await svc.createUser(req.params.customer_number, req.body), 'User created'),
  )

  app.get(
    '/accounts/:customer_number/keys',
    {
      config: admin,
      schema: {
        operationId: 'adminListKeys',
        tags: tags('Users and keys'),
        summary: 'List the API keys of an account',
        params: S.CustomerNumberParams,
        response: { 200: S.KeysReply, ...adminErrors },
      },
    },
    async (req) => ok({ keys: await svc.listKeys(req.params.customer_number) }),
  )

  app.post(
    '/accounts/:customer_number/keys',
    {
      config: admin,
      schema: {
        operationId: 'adminCreateKey',
        tags: tags('Users and keys'),
        summary: 'Create an API key (shown once in the answer)',
        params: S.CustomerNumberParams,
        body: S.KeyBody,
        response: { 200: S.CreatedKeyReply, ...adminErrors },
      },
    },
    async (req) => {
      const b = req.body
      return ok(
        await svc.createKey(req.params.customer_number, {
          userId: b.user_id,
          label: b.label,
          expiresAt: b.expires_at ?? null,
          allowedIps: b.allowed_ips,
        }),
        'API key created',
      )
    },
  )

  app.delete(
    '/accounts/:customer_number/keys/:key',
    {
      config: admin,
      schema: {
        operationId: 'adminRevokeKey',
        tags: tags('Users and keys'),
        summary: 'Revoke an API key',
        params: S.KeyParams,
        response: { 200: S.KeyReply, ...adminErrors },
      },
    },
    async (req) => ok(await svc.revokeKey(req.params.customer_number, req.params.key), 'API key revoked'),
  )

  app.put(
    '/accounts/:customer_number/keys/:key/whitelist',
    {
      config: admin,
      schema: {
        operationId: 'adminSetKeyWhitelist',
        tags: tags('Users and keys'),
        summary: 'Replace the IP whitelist of an API key (empty = any address)',
        params: S.KeyParams,
        body: S.WhitelistBody,
        response: { 200: S.KeyReply, ...adminErrors },
      },
    },
    async (req) => ok(await svc.setWhitelist(req.params.customer_number, req.params.key, req.body.allowed_ips)),
  )

  app.put(
    '/accounts/:customer_number/keys/:key/expiry',
    {
      config: admin,
      schema: {
        operationId: 'adminSetKeyExpiry',
        tags: tags('Users and keys'),
        summary: 'Set or clear the expiry of an API key',
        params: S.KeyParams,
        body: S.ExpiryBody,
        response: { 200: S.KeyReply, ...adminErrors },
      },
    },
    async (req) => ok(await svc.setExpiry(req.params.customer_number, req.params.key, req.body.expires_at)),
  )
}

/** The operator's view of what happened and what is queued: the audit log and the jobs. */
export const adminActivityRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const svc = app.services.adminActivity

  app.get(
    '/audit',
    {
      config: admin,
      schema: {
        operationId: 'adminAuditLog',
        tags: tags('Audit'),
        summary: 'Read the audit log of mutating calls, newest first',
        querystring: S.AuditQuery,
        response: { 200: S.AuditReply, ...adminErrors },
      },
    },
    async (req) => ok(await svc.audit(req.query)),
  )

  app.get(
    '/jobs',
    {
      config: admin,
      schema: {
        operationId: 'adminListJobs',
        tags: tags('Jobs'),
        summary: 'List jobs, newest first',
        querystring: S.JobsQuery,
        response: { 200: S.JobsReply, ...adminErrors },
      },
    },
    async (req) => ok(await svc.jobs(req.query)),
  )

  app.get(
    '/jobs/:id',
    {
      config: admin,
      schema: {
        operationId: 'adminGetJob',
        tags: tags('Jobs'),
        summary: 'Get a job',
        params: S.IdParams,
        response: { 200: S.JobReply, ...adminErrors },
      },
    },
    async (req) => ok(await svc.job(req.params.id)),
  )

  app.post(
    '/jobs/:id/retry',
    {
      config: admin,
      schema: {
        operationId: 'adminRetryJob',
        tags: tags('Jobs'),
        summary: 'Queue a failed job again with fresh attempts',
        params: S.IdParams,
        response: { 200: S.JobReply, ...adminErrors },
      },
    },
    async (req) => ok(await svc.retryJob(req.params.id), 'Job queued'),
  )

  app.post(
    '/jobs/run',
    {
      config: admin,
      schema: {
        operationId: 'adminRunDueJobs',
        tags: tags('Jobs'),
        summary: 'Run every due job now, in this request (for instances started with HOSTAPI_JOBS=0)',
        response: { 200: S.RunJobsReply, ...adminErrors },
      },
    },
    async () => ok({ jobs_run: await app.ctx.jobs.drain() }),
  )
}

/** The operator's tools: the DNS resync, the mail outbox and the metrics. */
export const adminOperationsRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const svc = app.services.adminActivity

  app.post(
    '/dns/resync',
    {
      config: admin,
      schema: {
        operationId: 'adminResyncDns',
        tags: tags('DNS'),
        summary:
          "Rebuild the DNS driver's zones (PowerDNS) from the database, all or those named, and report the drift",
        body: S.DnsResyncBody,
        response: { 200: S.DnsResyncReply, ...adminErrors },
      },
    },
    async (req) => ok({ drift: await app.ctx.services.zoneDelivery.resync(req.body.domains) }),
  )

  app.get(
    '/dns/sync',
    {
      config: admin,
      schema: {
        operationId: 'adminDnsSync',
        tags: tags('DNS'),
        summary: "Whether each zone's changes reached the DNS server the driver pushes to (PowerDNS)",
        description:
          'One entry per served zone (at most 1000, by name): in sync, since when a change waits, the last push error. ' +
          'With a driver that serves from the database itself (the built-in server) `pushes` is false and the list empty.',
        querystring: S.DnsSyncQuery,
        response: { 200: S.DnsSyncReply, ...adminErrors },
      },
    },
    async (req) => {
      const zones = req.query.domain ? [req.query.domain.toLowerCase()] : undefined
      return ok(await app.ctx.services.zoneDelivery.syncState(zones, { pending: req.query.pending }))
    },
  )

  app.get(
    '/outbox',
    {
      config: admin,
      schema: {
        operationId: 'adminListOutbox',
        tags: tags('Mail'),
        summary: 'List the mail the built-in mail driver sent, newest first',
        querystring: S.OutboxQuery,
        response: { 200: S.OutboxReply, ...adminErrors },
      },
    },
    async (req) => ok(await svc.outbox(req.query)),
  )

  app.get(
    '/outbox/:id',
    {
      config: admin,
      schema: {
        operationId: 'adminGetMessage',
        tags: tags('Mail'),
        summary: 'Get one sent message',
        params: S.IdParams,
        response: { 200: S.MessageReply, ...adminErrors },
      },
    },
    async (req) => ok(await svc.message(req.params.id)),
  )

  app.post(
    '/outbox/:id/resend',
    {
      config: admin,
      schema: {
        operationId: 'adminResendMessage',
        tags: tags('Mail'),
        summary: 'Send a message the SMTP relay refused again',
        description:
          'Queues a new attempt of a `failed` message (refused with a 5xx reply): its job hands the same message ' +
          'to the mail driver, which records the outcome as a new outbox message. Answers the queued job.',
        params: S.IdParams,
        response: { 200: S.JobReply, ...adminErrors },
      },
    },
    async (req) => ok(await svc.resendMessage(req.params.id), 'Message queued'),
  )

  app.get(
    '/metrics',
    {
      config: admin,
      schema: {
        operationId: 'adminMetrics',
        tags: tags('Observability'),
        summary: 'Prometheus metrics (text exposition format)',
        response: { 200: Type.String({ description: 'Prometheus text format' }), ...adminErrors },
      },
    },
    async (_req, reply) => {
      const metrics = app.ctx.ops.metrics
      return reply.type(metrics.contentType).send(await metrics.text())
    },
  )
}

/** The operator's routes of this file, in the order the admin document lists them. */
export const adminRoutes: readonly FastifyPluginAsync[] = [
  adminAccountRoutes,
  adminKeyRoutes,
  adminActivityRoutes,
  adminOperationsRoutes,
]
