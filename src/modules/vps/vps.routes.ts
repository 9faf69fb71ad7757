import { Type, type TSchema } from 'typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { DryRunQuery, isDryRun } from '../../http/dry-run.js'
import { Envelope, ok } from '../../http/schemas.js'
import { sshKeysRoutes } from './ssh-keys.routes.js'
import { vpsNetworkRoutes } from './vps-network.routes.js'
import {
  BackupList, CancelResult, HostnameBody, HostnameResult, Image, OrderBody, PasswordResult, Product, ReinstallBody, ReinstallResult,
  RescueBody, RescueResult, RestoreBody, ReverseDnsBody, TaskResult, VpsDetail, VpsIdParams, VpsListItem, taskExample, vpsDetailExample,
  vpsListExample,
} from './vps.schemas.js'

const TAGS = ['VPS']
const dry = (req: { query: unknown }) => ({ dryRun: isDryRun(req.query as { test?: string }) })
const DESCRIPTION_ACTION =
  'Queues a task and returns it; the VPS shows it in `tasks[]` and is locked (`vps_locked`) until it ends. ' +
  'Any action while locked → 400 `VPS is locked by a running task`; an action that does not fit the state → 400 naming why.'

/** VPS instances, power and disk tasks, backups and ordering; with the SSH key and network routes. */
export const vpsRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const vps = () => app.services.vps
  const env = <T extends TSchema>(t: T, example: unknown) => ({ 200: Envelope(t, example) })
  await app.register(sshKeysRoutes)
  await app.register(vpsNetworkRoutes)

  app.get('/vps', {
    config: { area: 'vps', cache: true },
    schema: { operationId: 'listVps', tags: TAGS, summary: 'List VPS', response: env(Type.Object({ vps: Type.Array(VpsListItem) }), vpsListExample) },
  }, async (req) => ok({ vps: await vps().list(req.principal!.accountId) }))

  app.get('/vps/images', {
    config: { area: 'vps' },
    schema: {
      operationId: 'listVpsImages', tags: TAGS, summary: 'List available OS images',
      response: env(Type.Object({ images: Type.Array(Image) }), { images: [{ id: 'debian-12', name: 'Debian 12 (Bookworm)', family: 'debian', version: '12' }] }),
    },
  }, async () => ok({ images: await vps().images() }))

  app.get('/vps/products', {
    config: { area: 'vps' },
    schema: {
      operationId: 'listVpsProducts', tags: TAGS, summary: 'List VPS products',
      response: env(Type.Object({ products: Type.Array(Product) }), {
        products: [{ id: 'vps-m', name: 'VPS M', cpu: 2, memory_mb: 4096, disk_gb: 80, price: 9.99, locations: ['ams', 'rtm'], durations: [1, 3, 6, 12, 24] }],
      }),
    },
  }, async () => ok({ products: vps().ordering.products() }))

  app.post('/vps/order', {
    config: { area: 'order', idempotent: true },
    schema: {
      operationId: 'orderVps', querystring: DryRunQuery, tags: TAGS, summary: 'Order a VPS',
      description: 'Checks the order, charges it and provisions the VPS asynchronously through the order (see GET /orders/{order_id}). ' +
        'The new VPS has a random root password: install SSH keys (`ssh_key_ids`) or use reset-password. `?test=1`: checks the order and answers `order_id` 0 without ordering or charging.',
      body: OrderBody,
      response: env(Type.Object({ order_id: Type.Integer() }), { order_id: 1202 }),
    },
  }, async (req) => {
    const accountId = req.principal!.accountId
    const input = { productId: req.body.product_id, imageId: req.body.image_id, hostname: req.body.hostname, location: req.body.location,
      sshKeyIds: req.body.ssh_key_ids, billingMonths: req.body.duration }
    const checked = await vps().ordering.checkOrder(accountId, input)
    if (dry(req).dryRun) return ok({ order_id: 0 })
    const { orderId } = await app.services.orders.createOrder(accountId, [{
      type: 'vps',
      name: checked.hostname,
      details: { ...input, hostname: checked.hostname, location: checked.location, billingMonths: checked.months },
      priceCents: checked.product.priceCents * checked.months,
      description: `${checked.product.name} ${checked.hostname}, ${checked.months} month(s)`,
    }])
    return ok({ order_id: orderId })
  })

  app.get('/vps/:id', {
    config: { area: 'vps', fixture: 'vps' },
    schema: { operationId: 'getVps', tags: TAGS, summary: 'Get VPS details', params: VpsIdParams, response: env(VpsDetail, vpsDetailExample) },
  }, async (req) => ok(await vps().details(req.principal!.accountId, req.params.id)))

  app.put('/vps/:id', {
    config: { area: 'vps', fixture: 'vpsReverse' },
    schema: {
      operationId: 'updateVps', querystring: DryRunQuery, tags: TAGS, summary: 'Update reverse DNS of the VPS\'s addresses', params: VpsIdParams, body: ReverseDnsBody,
      response: env(VpsDetail, vpsDetailExample),
    },
  }, async (req) => ok(await vps().updateReverseDns(req.principal!.accountId, req.params.id, req.body['ip-addresses'], dry(req)), 'Reverse DNS updated'))

  app.delete('/vps/:id', {
    config: { area: 'vps', fixture: 'vps' },
    schema: {
      operationId: 'cancelVps', querystring: DryRunQuery, tags: TAGS, summary: 'Cancel a VPS', description: 'The VPS keeps running until the end of its billing period (`cancellation_date`), then ends.',
      params: VpsIdParams, response: env(CancelResult, { id: 501, cancellation_date: '2026-04-10' }),
    },
  }, async (req) => ok(await vps().lifecycle.cancel(req.principal!.accountId, req.params.id, dry(req)), 'Cancellation scheduled'))

  app.put('/vps/:id/cancel-delete', {
    config: { area: 'vps', fixture: 'vps' },
    schema: { operationId: 'cancelVpsDeletion', querystring: DryRunQuery, tags: TAGS, summary: 'Undo a pending cancellation', params: VpsIdParams, response: env(CancelResult, { id: 501, cancellation_date: null }) },
  }, async (req) => ok(await vps().lifecycle.cancelDelete(req.principal!.accountId, req.params.id, dry(req)), 'Cancellation withdrawn'))

  for (const [action, summary] of [
    ['start', 'Start a VPS'], ['stop', 'Stop a VPS gracefully (ACPI; a guest that ignores it makes the task fail: use poweroff)'],
    ['poweroff', 'Power off a VPS (hard)'], ['restart', 'Restart a VPS'],
  ] as const) {
    app.post(`/vps/:id/${action}`, {
      config: { area: 'vps', fixture: 'vps' },
      schema: { operationId: `${action}Vps`, querystring: DryRunQuery, tags: TAGS, summary, description: DESCRIPTION_ACTION, params: VpsIdParams, response: env(TaskResult, { task: { ...taskExample, action } }) },
    }, async (req) => ok({ task: await vps().tasks.power(req.principal!.accountId, req.params.id, action, dry(req)) }, 'Task queued'))
  }

  app.put('/vps/:id/rescue', {
    config: { area: 'vps', fixture: 'vpsRescue' },
    schema: {
      operationId: 'setVpsRescue', querystring: DryRunQuery, tags: TAGS, summary: 'Enable or disable rescue mode',
      description: `Enabling reboots into the rescue system and returns its one-time root password. ${DESCRIPTION_ACTION}`,
      params: VpsIdParams, body: RescueBody,
      response: env(RescueResult, { task: { ...taskExample, action: 'rescue_on' }, rescue_password: 'q7RkP2mZx9TnW4vLc8Hd' }),
    },
  }, async (req) => ok(await vps().lifecycle.rescue(req.principal!.accountId, req.params.id, req.body.enable, dry(req)), 'Task queued'))

  app.post('/vps/:id/reinstall', {
    config: { area: 'vps', fixture: 'vpsReinstall' },
    schema: {
      operationId: 'reinstallVps', querystring: DryRunQuery, tags: TAGS, summary: 'Reinstall a VPS from an image', description: `Wipes the disk; the new root password is returned only this once. ${DESCRIPTION_ACTION}`,
      params: VpsIdParams, body: ReinstallBody,
      response: env(ReinstallResult, { task: { ...taskExample, action: 'reinstall' }, root_password: 'q7RkP2mZx9TnW4vLc8Hd' }),
    },
  }, async (req) => ok(await vps().lifecycle.reinstall(req.principal!.accountId, req.params.id, req.body.image_id, req.body.ssh_key_ids, dry(req)), 'Task queued'))

  app.post('/vps/:id/reset-password', {
    config: { area: 'vps', fixture: 'vps' },
    schema: {
      operationId: 'resetVpsPassword', querystring: DryRunQuery, tags: TAGS, summary: 'Reset the root password', description: 'The VPS must be running (not in rescue mode); the new password is returned only this once.',
      params: VpsIdParams, response: env(PasswordResult, { root_password: 'q7RkP2mZx9TnW4vLc8Hd' }),
    },
  }, async (req) => ok(await vps().lifecycle.resetPassword(req.principal!.accountId, req.params.id, dry(req)), 'Root password reset'))

  app.put('/vps/:id/hostname', {
    config: { area: 'vps', fixture: 'vpsHostname' },
    schema: { operationId: 'setVpsHostname', querystring: DryRunQuery, tags: TAGS, summary: 'Change the hostname', params: VpsIdParams, body: HostnameBody, response: env(HostnameResult, { id: 501, hostname: 'web1.example.com' }) },
  }, async (req) => ok(await vps().lifecycle.setHostname(req.principal!.accountId, req.params.id, req.body.hostname, dry(req)), 'Hostname changed'))

  app.get('/vps/:id/backups', {
    config: { area: 'vps', fixture: 'vps' },
    schema: {
      operationId: 'listVpsBackups', tags: TAGS, summary: 'List VPS backups',
      description: 'Answers `details` instead of `data`. 400 `No valid VPS ID provided`; 400 `No access to this VPS`.',
      params: VpsIdParams, response: { 200: BackupList },
    },
  }, async (req) => {
    const backups = await vps().backups.list(req.principal!.accountId, req.params.id)
    return { status: 200, status_description: 'Request successful', details: { backups, count: backups.length } }
  })

  app.post('/vps/:id/backups', {
    config: { area: 'vps', fixture: 'vps' },
    schema: { operationId: 'createVpsBackup', querystring: DryRunQuery, tags: TAGS, summary: 'Create a backup', description: `A \`manual\` backup appears when the task is done. ${DESCRIPTION_ACTION}`, params: VpsIdParams, response: env(TaskResult, { task: { ...taskExample, action: 'backup' } }) },
  }, async (req) => ok({ task: await vps().backups.create(req.principal!.accountId, req.params.id, dry(req)) }, 'Task queued'))

  app.patch('/vps/:id/backups', {
    config: { area: 'vps', fixture: 'vpsRestore' },
    schema: { operationId: 'restoreVpsBackup', querystring: DryRunQuery, tags: TAGS, summary: 'Restore a backup', description: DESCRIPTION_ACTION, params: VpsIdParams, body: RestoreBody, response: env(TaskResult, { task: { ...taskExample, action: 'restore' } }) },
  }, async (req) => ok({ task: await vps().backups.restore(req.principal!.accountId, req.params.id, req.body.key, req.body.type, dry(req)) }, 'Task queued'))
}
