import { Type, type TSchema } from 'typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { Envelope, OkMessage, ok, okMessage } from '../../http/schemas.js'
import {
  Attachment, BackupList, CancelResult, Firewall, FirewallBody, FloatingAttachBody, FloatingIp, FloatingReserveBody, HostnameBody,
  HostnameResult, IdParams, Image, OrderBody, PasswordResult, Product, ReinstallBody, ReinstallResult, RescueBody, RescueResult,
  RestoreBody, ReverseDnsBody, SshKey, SshKeyBody, Subnet, SubnetBody, SubnetParams, TaskResult, Vpc, VpcBody, VpsDetail, VpsIdParams,
  VpsListItem, firewallExample, floatingExample, sshKeyExample, subnetExample, taskExample, vpsDetailExample, vpsListExample,
} from './vps.schemas.js'

const TAGS = ['VPS']
const DESCRIPTION_ACTION =
  'Queues a task and returns it; the VPS shows it in `tasks[]` and is locked (`vps_locked`) until it ends. ' +
  'Any action while locked → 400 `VPS is locked by a running task`; an action that does not fit the state → 400 naming why.'

/** VPS instances, power and disk tasks, backups, SSH keys, firewall, VPC, ordering and floating IPs. */
export const vpsRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const vps = () => app.services.vps
  const env = <T extends TSchema>(t: T, example: unknown) => ({ 200: Envelope(t, example) })

  app.get('/vps', {
    config: { area: 'vps' },
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
  }, async () => ok({ products: vps().products() }))

  app.post('/vps/order', {
    config: { area: 'vps', idempotent: true },
    schema: {
      operationId: 'orderVps', tags: TAGS, summary: 'Order a VPS',
      description: 'Checks the order, charges it and provisions the VPS asynchronously through the order (see GET /orders/{order_id}). ' +
        'The new VPS has a random root password: install SSH keys (`ssh_key_ids`) or use reset-password.',
      body: OrderBody,
      response: env(Type.Object({ order_id: Type.Integer() }), { order_id: 1202 }),
    },
  }, async (req) => {
    const accountId = req.principal!.accountId
    const input = { productId: req.body.product_id, imageId: req.body.image_id, hostname: req.body.hostname, location: req.body.location,
      sshKeyIds: req.body.ssh_key_ids, billingMonths: req.body.duration }
    const checked = await vps().checkOrder(accountId, input)
    const { orderId } = await app.services.orders.createOrder(accountId, [{
      type: 'vps',
      name: checked.hostname,
      details: { ...input, hostname: checked.hostname, location: checked.location, billingMonths: checked.months },
      priceCents: checked.product.priceCents * checked.months,
      description: `${checked.product.name} ${checked.hostname}, ${checked.months} month(s)`,
    }])
    return ok({ order_id: orderId })
  })

  app.get('/vps/ssh-keys', {
    config: { area: 'vps' },
    schema: { operationId: 'listSshKeys', tags: TAGS, summary: 'List SSH keys', response: env(Type.Object({ ssh_keys: Type.Array(SshKey) }), { ssh_keys: [sshKeyExample] }) },
  }, async (req) => ok({ ssh_keys: await vps().listSshKeys(req.principal!.accountId) }))

  app.post('/vps/ssh-keys', {
    config: { area: 'vps' },
    schema: {
      operationId: 'addSshKey', tags: TAGS, summary: 'Add an SSH key',
      description: 'The key is parsed and checked (ssh-ed25519, ecdsa, ssh-rsa ≥ 2048 bits); the same key twice → 400.',
      body: SshKeyBody, response: env(SshKey, sshKeyExample),
    },
  }, async (req) => ok(await vps().addSshKey(req.principal!.accountId, req.body.name, req.body.public_key), 'SSH key added'))

  app.delete('/vps/ssh-keys/:id', {
    config: { area: 'vps', fixture: 'vpsSshKey' },
    schema: {
      operationId: 'deleteSshKey', tags: TAGS, summary: 'Delete an SSH key', description: 'Unknown or another account\'s key → 404 `SSH key not found`.',
      params: IdParams, response: { 200: OkMessage },
    },
  }, async (req) => {
    await vps().deleteSshKey(req.principal!.accountId, req.params.id)
    return okMessage('SSH key deleted')
  })

  app.get('/vps/floating-ips', {
    config: { area: 'vps' },
    schema: { operationId: 'listFloatingIps', tags: TAGS, summary: 'List floating IPs', response: env(Type.Object({ floating_ips: Type.Array(FloatingIp) }), { floating_ips: [floatingExample] }) },
  }, async (req) => ok({ floating_ips: await vps().listFloatingIps(req.principal!.accountId) }))

  app.post('/vps/floating-ips', {
    config: { area: 'vps' },
    schema: { operationId: 'reserveFloatingIp', tags: TAGS, summary: 'Reserve a floating IP', body: FloatingReserveBody, response: env(FloatingIp, { ...floatingExample, vps_id: null }) },
  }, async (req) => ok(await vps().reserveFloatingIp(req.principal!.accountId, req.body.location), 'Floating IP reserved'))

  app.put('/vps/floating-ips/:id/attach', {
    config: { area: 'vps', fixture: 'vpsFloatingIp' },
    schema: {
      operationId: 'attachFloatingIp', tags: TAGS, summary: 'Attach a floating IP to a VPS',
      description: 'Unknown or another account\'s floating IP → 404 `Floating IP not found`; the VPS must be in the same location.',
      params: IdParams, body: FloatingAttachBody, response: env(FloatingIp, floatingExample),
    },
  }, async (req) => ok(await vps().attachFloatingIp(req.principal!.accountId, req.params.id, req.body.vps_id), 'Floating IP attached'))

  app.put('/vps/floating-ips/:id/detach', {
    config: { area: 'vps', fixture: 'vpsFloatingIp' },
    schema: { operationId: 'detachFloatingIp', tags: TAGS, summary: 'Detach a floating IP', params: IdParams, response: env(FloatingIp, { ...floatingExample, vps_id: null }) },
  }, async (req) => ok(await vps().detachFloatingIp(req.principal!.accountId, req.params.id), 'Floating IP detached'))

  app.delete('/vps/floating-ips/:id', {
    config: { area: 'vps', fixture: 'vpsFloatingIp' },
    schema: {
      operationId: 'deleteFloatingIp', tags: TAGS, summary: 'Release a floating IP', description: 'An attached floating IP cannot be deleted: detach it first.',
      params: IdParams, response: { 200: OkMessage },
    },
  }, async (req) => {
    await vps().deleteFloatingIp(req.principal!.accountId, req.params.id)
    return okMessage('Floating IP deleted')
  })

  app.get('/vps/:id', {
    config: { area: 'vps', fixture: 'vps' },
    schema: { operationId: 'getVps', tags: TAGS, summary: 'Get VPS details', params: VpsIdParams, response: env(VpsDetail, vpsDetailExample) },
  }, async (req) => ok(await vps().details(req.principal!.accountId, req.params.id)))

  app.put('/vps/:id', {
    config: { area: 'vps', fixture: 'vpsReverse' },
    schema: {
      operationId: 'updateVps', tags: TAGS, summary: 'Update reverse DNS of the VPS\'s addresses', params: VpsIdParams, body: ReverseDnsBody,
      response: env(VpsDetail, vpsDetailExample),
    },
  }, async (req) => ok(await vps().updateReverseDns(req.principal!.accountId, req.params.id, req.body['ip-addresses']), 'Reverse DNS updated'))

  app.delete('/vps/:id', {
    config: { area: 'vps', fixture: 'vps' },
    schema: {
      operationId: 'cancelVps', tags: TAGS, summary: 'Cancel a VPS', description: 'The VPS keeps running until the end of its billing period (`cancellation_date`), then ends.',
      params: VpsIdParams, response: env(CancelResult, { id: 501, cancellation_date: '2026-04-10' }),
    },
  }, async (req) => ok(await vps().cancel(req.principal!.accountId, req.params.id), 'Cancellation scheduled'))

  app.put('/vps/:id/cancel-delete', {
    config: { area: 'vps', fixture: 'vps' },
    schema: { operationId: 'cancelVpsDeletion', tags: TAGS, summary: 'Undo a pending cancellation', params: VpsIdParams, response: env(CancelResult, { id: 501, cancellation_date: null }) },
  }, async (req) => ok(await vps().cancelDelete(req.principal!.accountId, req.params.id), 'Cancellation withdrawn'))

  for (const [action, summary] of [
    ['start', 'Start a VPS'], ['stop', 'Stop a VPS gracefully (ACPI; a guest that ignores it makes the task fail: use poweroff)'],
    ['poweroff', 'Power off a VPS (hard)'], ['restart', 'Restart a VPS'],
  ] as const) {
    app.post(`/vps/:id/${action}`, {
      config: { area: 'vps', fixture: 'vps' },
      schema: { operationId: `${action}Vps`, tags: TAGS, summary, description: DESCRIPTION_ACTION, params: VpsIdParams, response: env(TaskResult, { task: { ...taskExample, action } }) },
    }, async (req) => ok({ task: await vps().power(req.principal!.accountId, req.params.id, action) }, 'Task queued'))
  }

  app.put('/vps/:id/rescue', {
    config: { area: 'vps', fixture: 'vpsRescue' },
    schema: {
      operationId: 'setVpsRescue', tags: TAGS, summary: 'Enable or disable rescue mode',
      description: `Enabling reboots into the rescue system and returns its one-time root password. ${DESCRIPTION_ACTION}`,
      params: VpsIdParams, body: RescueBody,
      response: env(RescueResult, { task: { ...taskExample, action: 'rescue_on' }, rescue_password: 'q7RkP2mZx9TnW4vLc8Hd' }),
    },
  }, async (req) => ok(await vps().rescue(req.principal!.accountId, req.params.id, req.body.enable), 'Task queued'))

  app.post('/vps/:id/reinstall', {
    config: { area: 'vps', fixture: 'vpsReinstall' },
    schema: {
      operationId: 'reinstallVps', tags: TAGS, summary: 'Reinstall a VPS from an image', description: `Wipes the disk; the new root password is returned only this once. ${DESCRIPTION_ACTION}`,
      params: VpsIdParams, body: ReinstallBody,
      response: env(ReinstallResult, { task: { ...taskExample, action: 'reinstall' }, root_password: 'q7RkP2mZx9TnW4vLc8Hd' }),
    },
  }, async (req) => ok(await vps().reinstall(req.principal!.accountId, req.params.id, req.body.image_id, req.body.ssh_key_ids), 'Task queued'))

  app.post('/vps/:id/reset-password', {
    config: { area: 'vps', fixture: 'vps' },
    schema: {
      operationId: 'resetVpsPassword', tags: TAGS, summary: 'Reset the root password', description: 'The VPS must be running (not in rescue mode); the new password is returned only this once.',
      params: VpsIdParams, response: env(PasswordResult, { root_password: 'q7RkP2mZx9TnW4vLc8Hd' }),
    },
  }, async (req) => ok(await vps().resetPassword(req.principal!.accountId, req.params.id), 'Root password reset'))

  app.put('/vps/:id/hostname', {
    config: { area: 'vps', fixture: 'vpsHostname' },
    schema: { operationId: 'setVpsHostname', tags: TAGS, summary: 'Change the hostname', params: VpsIdParams, body: HostnameBody, response: env(HostnameResult, { id: 501, hostname: 'web1.example.com' }) },
  }, async (req) => ok(await vps().setHostname(req.principal!.accountId, req.params.id, req.body.hostname), 'Hostname changed'))

  app.get('/vps/:id/backups', {
    config: { area: 'vps', fixture: 'vps' },
    schema: {
      operationId: 'listVpsBackups', tags: TAGS, summary: 'List VPS backups',
      description: 'Answers `details` instead of `data`. 400 `No valid VPS ID provided`; 400 `No access to this VPS`.',
      params: VpsIdParams, response: { 200: BackupList },
    },
  }, async (req) => {
    const backups = await vps().listBackups(req.principal!.accountId, req.params.id)
    return { status: 200, status_description: 'Request successful', details: { backups, count: backups.length } }
  })

  app.post('/vps/:id/backups', {
    config: { area: 'vps', fixture: 'vps' },
    schema: { operationId: 'createVpsBackup', tags: TAGS, summary: 'Create a backup', description: `A \`manual\` backup appears when the task is done. ${DESCRIPTION_ACTION}`, params: VpsIdParams, response: env(TaskResult, { task: { ...taskExample, action: 'backup' } }) },
  }, async (req) => ok({ task: await vps().createBackup(req.principal!.accountId, req.params.id) }, 'Task queued'))

  app.patch('/vps/:id/backups', {
    config: { area: 'vps', fixture: 'vpsRestore' },
    schema: { operationId: 'restoreVpsBackup', tags: TAGS, summary: 'Restore a backup', description: DESCRIPTION_ACTION, params: VpsIdParams, body: RestoreBody, response: env(TaskResult, { task: { ...taskExample, action: 'restore' } }) },
  }, async (req) => ok({ task: await vps().restoreBackup(req.principal!.accountId, req.params.id, req.body.key, req.body.type) }, 'Task queued'))

  app.get('/vps/:id/firewall', {
    config: { area: 'vps', fixture: 'vps' },
    schema: { operationId: 'getVpsFirewall', tags: TAGS, summary: 'Get the firewall', params: VpsIdParams, response: env(Firewall, firewallExample) },
  }, async (req) => ok(await vps().getFirewall(req.principal!.accountId, req.params.id)))

  app.put('/vps/:id/firewall', {
    config: { area: 'vps', fixture: 'vpsFirewall' },
    schema: { operationId: 'updateVpsFirewall', tags: TAGS, summary: 'Replace the firewall', description: 'Inbound rules, at most 50.', params: VpsIdParams, body: FirewallBody, response: env(Firewall, firewallExample) },
  }, async (req) => ok(await vps().setFirewall(req.principal!.accountId, req.params.id, req.body.enabled, req.body.rules), 'Firewall updated'))

  app.get('/vps/:id/vpc', {
    config: { area: 'vps', fixture: 'vps' },
    schema: { operationId: 'getVpc', tags: TAGS, summary: 'Get the VPC on the VPS\'s host', description: 'No VPC on the host → 404.', params: VpsIdParams, response: env(Vpc, { id: 4, name: 'private', host: 'ams-hv01', created: '2026-03-01 10:15', subnets: [subnetExample] }) },
  }, async (req) => ok(await vps().getVpc(req.principal!.accountId, req.params.id)))

  app.post('/vps/:id/vpc', {
    config: { area: 'vps', fixture: 'vpsVpc' },
    schema: { operationId: 'createVpc', tags: TAGS, summary: 'Create a VPC on the VPS\'s host', description: 'One VPC per host per account.', params: VpsIdParams, body: VpcBody, response: env(Vpc, { id: 4, name: 'private', host: 'ams-hv01', created: '2026-03-01 10:15', subnets: [] }) },
  }, async (req) => ok(await vps().createVpc(req.principal!.accountId, req.params.id, req.body.name), 'VPC created'))

  app.post('/vps/:id/vpc/subnets', {
    config: { area: 'vps', fixture: 'vpsSubnet' },
    schema: {
      operationId: 'addVpcSubnet', tags: TAGS, summary: 'Add a VPC subnet',
      description: 'Adds a private subnet to the account\'s VPC; the VPS must be on the VPC\'s host. Omitted gateway: the first usable address; ' +
        'omitted DHCP range: the second to the last usable address. Private ranges only, no overlap with other subnets of the VPC.',
      params: VpsIdParams, body: SubnetBody, response: env(Subnet, subnetExample),
    },
  }, async (req) => ok(await vps().addSubnet(req.principal!.accountId, req.params.id, req.body), 'Subnet created'))

  app.put('/vps/:id/vpc/subnets/:subnet_id', {
    config: { area: 'vps', fixture: 'vpsAttach' },
    schema: {
      operationId: 'attachVpcSubnet', tags: TAGS, summary: 'Attach the VPS to a subnet',
      description: 'Returns the VPS\'s private address from the DHCP range (the same one again when attached already). Unknown subnet → 404 `Subnet not found`.',
      params: SubnetParams, response: env(Attachment, { vps_id: 501, subnet_id: 7, address: '10.10.0.2', cidr: '10.10.0.0/24', gateway: '10.10.0.1' }),
    },
  }, async (req) => ok(await vps().attachSubnet(req.principal!.accountId, req.params.id, req.params.subnet_id), 'Subnet attached'))
}
