import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { DryRunQuery, dry } from '../../http/dry-run.js'
import { Envelope, ok } from '../../http/schemas.js'
import { BackupList, RestoreBody, TASK_DESCRIPTION, TaskResult, VpsIdParams, taskExample } from './vps.schemas.js'

/** A VPS's backups: the list, a manual backup and a restore. */
export const vpsBackupsRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const backups = () => app.services.vps.backups

  app.get(
    '/vps/:id/backups',
    {
      config: { area: 'vps', fixture: 'vps', cache: { version: () => backups().listVersion() } },
      schema: {
        operationId: 'listVpsBackups',
        tags: ['VPS'],
        summary: 'List VPS backups',
        description:
          'Answers `details` instead of `data`. 400 `No valid VPS ID provided`; 400 `No access to this VPS`.',
        params: VpsIdParams,
        response: { 200: BackupList },
      },
    },
    async (req) => {
      const list = await backups().list(req.caller.accountId, req.params.id)
      return { status: 200, status_description: 'Request successful', details: { backups: list, count: list.length } }
    },
  )

  app.post(
    '/vps/:id/backups',
    {
      config: { area: 'vps', fixture: 'vps' },
      schema: {
        operationId: 'createVpsBackup',
        querystring: DryRunQuery,
        tags: ['VPS'],
        summary: 'Create a backup',
        description: `A \`manual\` backup appears when the task is done. ${TASK_DESCRIPTION}`,
        params: VpsIdParams,
        response: { 200: Envelope(TaskResult, { task: { ...taskExample, action: 'backup' } }) },
      },
    },
    async (req) => {
      const task = await backups().create(req.caller.accountId, req.params.id, dry(req))
      return ok({ task }, 'Task queued')
    },
  )

  app.patch(
    '/vps/:id/backups',
    {
      config: { area: 'vps', fixture: 'vpsRestore' },
      schema: {
        operationId: 'restoreVpsBackup',
        querystring: DryRunQuery,
        tags: ['VPS'],
        summary: 'Restore a backup',
        description: TASK_DESCRIPTION,
        params: VpsIdParams,
        body: RestoreBody,
        response: { 200: Envelope(TaskResult, { task: { ...taskExample, action: 'restore' } }) },
      },
    },
    async (req) => {
      const { key, type } = req.body
      const task = await backups().restore(req.caller.accountId, req.params.id, key, type, dry(req))
      return ok({ task }, 'Task queued')
    },
  )
}
