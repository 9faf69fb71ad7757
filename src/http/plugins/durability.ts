import fp from 'fastify-plugin'
import { onSendOfMutatingRoutes } from '../route-hooks.js'

/**
 * A mutating call is answered only once what it wrote is on disk: the last onSend hook of every mutating
 * route waits for the database's group commit, after the audit row and the stored idempotent response.
 * Register it after every plugin that writes in onSend.
 */
export const durabilityPlugin = fp(async (app, opts: { durable: () => Promise<void> }) => {
  onSendOfMutatingRoutes(app, async (_req, _reply, payload) => {
    await opts.durable()
    return payload
  })
})
