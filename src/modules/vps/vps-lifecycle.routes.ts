import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { DryRunQuery, dry } from '../../http/dry-run.js'
import { Envelope, ok } from '../../http/schemas.js'
import {
  CancelResult,
  HostnameBody,
  HostnameResult,
  PasswordResult,
  ReinstallBody,
  ReinstallResult,
  RescueBody,
  RescueResult,
  TASK_DESCRIPTION,
  VpsIdParams,
  taskExample,
} from './vps.schemas.js'

/** Cancelling a VPS at the end of its billing period, and undoing it. */
export const vpsCancellationRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const lifecycle = () => app.services.vps.lifecycle

  app.delete(
    '/vps/:id',
    {
      config: { area: 'vps', fixture: 'vps' },
      schema: {
        operationId: 'cancelVps',
        querystring: DryRunQuery,
        tags: ['VPS'],
        summary: 'Cancel a VPS',
        description: 'The VPS keeps running until the end of its billing period (`cancellation_date`), then ends.',
        params: VpsIdParams,
        response: { 200: Envelope(CancelResult, { id: 501, cancellation_date: '2026-04-10' }) },
      },
    },
    async (req) => {
      const result = await lifecycle().cancel(req.caller.accountId, req.params.id, dry(req))
      return ok(result, 'Cancellation scheduled')
    },
  )

  app.put(
    '/vps/:id/cancel-delete',
    {
      config: { area: 'vps', fixture: 'vps' },
      schema: {
        operationId: 'cancelVpsDeletion',
        querystring: DryRunQuery,
        tags: ['VPS'],
        summary: 'Undo a pending cancellation',
        params: VpsIdParams,
        response: { 200: Envelope(CancelResult, { id: 501, cancellation_date: null }) },
      },
    },
    async (req) => {
      const result = await lifecycle().cancelDelete(req.caller.accountId, req.params.id, dry(req))
      return ok(result, 'Cancellation withdrawn')
    },
  )
}

/** The VPS's system: rescue mode, reinstall, root password and hostname. */
export const vpsSystemRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const lifecycle = () => app.services.vps.lifecycle

  app.put(
    '/vps/:id/rescue',
    {
      config: { area: 'vps', fixture: 'vpsRescue' },
      schema: {
        operationId: 'setVpsRescue',
        querystring: DryRunQuery,
        tags: ['VPS'],
        summary: 'Enable or disable rescue mode',
        description: `Enabling reboots into the rescue system and returns its one-time root password. ${TASK_DESCRIPTION}`,
        params: VpsIdParams,
        body: RescueBody,
        response: {
          200: Envelope(RescueResult, {
            task: { ...taskExample, action: 'rescue_on' },
            rescue_password: 'q7RkP2mZx9TnW4vLc8Hd',
          }),
        },
      },
    },
    async (req) => {
      const result = await lifecycle().rescue(req.caller.accountId, req.params.id, req.body.enable, dry(req))
      return ok(result, 'Task queued')
    },
  )

  app.post(
    '/vps/:id/reinstall',
    {
      config: { area: 'vps', fixture: 'vpsReinstall' },
      schema: {
        operationId: 'reinstallVps',
        querystring: DryRunQuery,
        tags: ['VPS'],
        summary: 'Reinstall a VPS from an image',
        description: `Wipes the disk; the new root password is returned only this once. ${TASK_DESCRIPTION}`,
        params: VpsIdParams,
        body: ReinstallBody,
        response: {
          200: Envelope(ReinstallResult, {
            task: { ...taskExample, action: 'reinstall' },
            root_password: 'q7RkP2mZx9TnW4vLc8Hd',
          }),
        },
      },
    },
    async (req) => {
      const { image_id: imageId, ssh_key_ids: keyIds } = req.body
      const result = await lifecycle().reinstall(req.caller.accountId, req.params.id, imageId, keyIds, dry(req))
      return ok(result, 'Task queued')
    },
  )

  app.post(
    '/vps/:id/reset-password',
    {
      config: { area: 'vps', fixture: 'vps' },
      schema: {
        operationId: 'resetVpsPassword',
        querystring: DryRunQuery,
        tags: ['VPS'],
        summary: 'Reset the root password',
        description: 'The VPS must be running (not in rescue mode); the new password is returned only this once.',
        params: VpsIdParams,
        response: { 200: Envelope(PasswordResult, { root_password: 'q7RkP2mZx9TnW4vLc8Hd' }) },
      },
    },
    async (req) => {
      const result = await lifecycle().resetPassword(req.caller.accountId, req.params.id, dry(req))
      return ok(result, 'Root password reset')
    },
  )

  app.put(
    '/vps/:id/hostname',
    {
      config: { area: 'vps', fixture: 'vpsHostname' },
      schema: {
        operationId: 'setVpsHostname',
        querystring: DryRunQuery,
        tags: ['VPS'],
        summary: 'Change the hostname',
        params: VpsIdParams,
        body: HostnameBody,
        response: { 200: Envelope(HostnameResult, { id: 501, hostname: 'web1.example.com' }) },
      },
    },
    async (req) => {
      const { hostname } = req.body
      const result = await lifecycle().setHostname(req.caller.accountId, req.params.id, hostname, dry(req))
      return ok(result, 'Hostname changed')
    },
  )
}
