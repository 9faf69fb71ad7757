import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { DryRunQuery, dry } from '../../http/dry-run.js'
import { Envelope, ok } from '../../http/schemas.js'
import type { PowerAction } from './vps-tasks.service.js'
import { TASK_DESCRIPTION, TaskResult, VpsIdParams, taskExample } from './vps.schemas.js'

/** What a power route's handler reads of its request. */
interface PowerRequest {
  caller: { accountId: number }
  params: { id: string }
  query: { test?: string }
}

/** Power actions on a VPS: start, stop, poweroff and restart, each a task. */
export const vpsPowerRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const power = async (req: PowerRequest, action: PowerAction) => {
    const task = await app.services.vps.tasks.power(req.caller.accountId, req.params.id, action, dry(req))
    return ok({ task }, 'Task queued')
  }

  app.post(
    '/vps/:id/start',
    {
      config: { area: 'vps', fixture: 'vps' },
      schema: {
        operationId: 'startVps',
        querystring: DryRunQuery,
        tags: ['VPS'],
        summary: 'Start a VPS',
        description: TASK_DESCRIPTION,
        params: VpsIdParams,
        response: { 200: Envelope(TaskResult, { task: { ...taskExample, action: 'start' } }) },
      },
    },
    async (req) => power(req, 'start'),
  )

  app.post(
    '/vps/:id/stop',
    {
      config: { area: 'vps', fixture: 'vps' },
      schema: {
        operationId: 'stopVps',
        querystring: DryRunQuery,
        tags: ['VPS'],
        summary: 'Stop a VPS gracefully (ACPI; a guest that ignores it makes the task fail: use poweroff)',
        description: TASK_DESCRIPTION,
        params: VpsIdParams,
        response: { 200: Envelope(TaskResult, { task: { ...taskExample, action: 'stop' } }) },
      },
    },
    async (req) => power(req, 'stop'),
  )

  app.post(
    '/vps/:id/poweroff',
    {
      config: { area: 'vps', fixture: 'vps' },
      schema: {
        operationId: 'poweroffVps',
        querystring: DryRunQuery,
        tags: ['VPS'],
        summary: 'Power off a VPS (hard)',
        description: TASK_DESCRIPTION,
        params: VpsIdParams,
        response: { 200: Envelope(TaskResult, { task: { ...taskExample, action: 'poweroff' } }) },
      },
    },
    async (req) => power(req, 'poweroff'),
  )

  app.post(
    '/vps/:id/restart',
    {
      config: { area: 'vps', fixture: 'vps' },
      schema: {
        operationId: 'restartVps',
        querystring: DryRunQuery,
        tags: ['VPS'],
        summary: 'Restart a VPS',
        description: TASK_DESCRIPTION,
        params: VpsIdParams,
        response: { 200: Envelope(TaskResult, { task: { ...taskExample, action: 'restart' } }) },
      },
    },
    async (req) => power(req, 'restart'),
  )
}
