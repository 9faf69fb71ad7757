import type { DemoSeeder } from '../../seed/demo-seeder.js'
import { BuiltinHypervisor } from '../../drivers/hypervisor/builtin.js'
import { ownTables } from '../../db/database.js'
import { VpsService } from './vps.service.js'

const DEMO_SSH_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl demo@laptop'

/**
 * The demo account's VPS: web1 running and db1 stopped, both with a manual backup, an SSH key, a VPC with a
 * subnet both are attached to, a firewall on web1 and a floating IP on it. With the built-in hypervisor the
 * tasks are run to their end at once, so the demo starts settled.
 */
export const seedVps: DemoSeeder = async (ctx, account) => {
  const driver =
    ctx.drivers.hypervisor instanceof BuiltinHypervisor
      ? new BuiltinHypervisor(ownTables(ctx.db), ctx.clock, { speed: 1_000_000 })
      : ctx.drivers.hypervisor
  const vps = new VpsService({
    db: ctx.db,
    clock: ctx.clock,
    jobs: ctx.jobs,
    hypervisor: driver,
    opts: { shutdownTimeoutSeconds: ctx.config.hypervisor.shutdownTimeoutSeconds },
  })
  const id = account.accountId
  const key = await vps.sshKeys.add(id, 'demo laptop', DEMO_SSH_KEY)

  const place = { location: 'ams', host: 'ams-hv01', sshKeyIds: [key.id] }
  const web = await vps.ordering.provision(id, {
    productId: 'vps-m',
    imageId: 'debian-12',
    hostname: 'web1.demo.example',
    ...place,
  })
  const db = await vps.ordering.provision(id, {
    productId: 'vps-s',
    imageId: 'ubuntu-24.04',
    hostname: 'db1.demo.example',
    ...place,
  })
  await vps.tasks.run(web.taskId)
  await vps.tasks.run(db.taskId)
  for (const v of [web.vpsId, db.vpsId]) await vps.tasks.run((await vps.backups.create(id, String(v))).id)
  await vps.tasks.run((await vps.tasks.power(id, String(db.vpsId), 'stop')).id)

  await vps.network.setFirewall(id, String(web.vpsId), true, [
    { protocol: 'tcp', port: '22', source: '0.0.0.0/0', description: 'SSH' },
    { protocol: 'tcp', port: '80', description: 'HTTP' },
    { protocol: 'tcp', port: '443', description: 'HTTPS' },
    { protocol: 'icmp', description: 'ping' },
  ])
  await vps.network.createVpc(id, String(web.vpsId), 'demo-private')
  const subnet = await vps.network.addSubnet(id, String(web.vpsId), { name: 'backend', cidr: '10.10.0.0/24' })
  for (const v of [web.vpsId, db.vpsId]) await vps.network.attachSubnet(id, String(v), String(subnet.id))
  const floating = await vps.network.reserveFloatingIp(id, 'ams')
  await vps.network.attachFloatingIp(id, String(floating.id), web.vpsId)
}
