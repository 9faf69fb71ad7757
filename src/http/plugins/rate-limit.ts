import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'
import type { Redis } from 'ioredis'
import { errors } from '../../errors.js'
import { callerIp } from '../caller.js'

/**
 * Per-key request budget (per minute) with `RateLimit-*` headers on every answer and `Retry-After` on 429.
 * Counters live in memory, or in Redis when several instances share one budget. A route may set its own
 * budget in `config.rateLimit` (availability checks do).
 */
export const rateLimitPlugin = fp(async (app, opts: { perKeyPerMinute: number; redis: Redis | null; redisPrefix: string }) => {
  await app.register(rateLimit, {
    global: true,
    max: opts.perKeyPerMinute,
    timeWindow: 60_000,
    hook: 'onRequest',
    enableDraftSpec: true,
    nameSpace: `${opts.redisPrefix}rl:`,
    ...(opts.redis ? { redis: opts.redis } : {}),
    skipOnError: true,
    keyGenerator: (req) => (req.principal ? `key:${req.principal.keyId}` : `ip:${callerIp(req)}`),
    errorResponseBuilder: (_req, context) => errors.rateLimited(Math.max(1, Math.ceil(context.ttl / 1000))),
  })
})
