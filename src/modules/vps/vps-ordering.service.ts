import type { Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import { iso } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import { ApiError, errors } from '../../errors.js'
import type { HypervisorDriver } from '../../drivers/hypervisor/hypervisor.js'
import * as repo from './vps.repository.js'
import { VPS_DURATIONS, VPS_PRODUCTS, findProduct } from './vps.catalog.js'
import { isHostname } from './network-rules.js'
import { findImage, type ImageRef, newPassword, viaDriver } from './vps.common.js'
import type { SshKeysService } from './ssh-keys.service.js'
import type { VpsTasks } from './vps-tasks.service.js'

/** What a VPS is ordered and provisioned with. */
export interface ProvisionInput {
  productId: string
  /** The image's integer id or slug. */
  imageId: ImageRef
  hostname: string
  location?: string
  sshKeyIds?: number[]
  billingMonths?: number
  /** Place on this host (tests, the operator). */
  host?: string
  /** The order item this VPS is provisioned for. */
  orderItemId?: number
  name?: string
}

/** What VpsOrderingService is built on. */
export interface VpsOrderingServiceDeps {
  db: Kysely<DB>
  clock: Clock
  hypervisor: HypervisorDriver
  tasks: VpsTasks
  sshKeys: SshKeysService
}

/** Ordering a VPS: the products on offer, the order's checks, and provisioning the ordered VPS. */
export class VpsOrderingService {
  private readonly db: Kysely<DB>
  private readonly clock: Clock
  private readonly hypervisor: HypervisorDriver
  private readonly tasks: VpsTasks
  private readonly sshKeys: SshKeysService

  constructor(deps: VpsOrderingServiceDeps) {
    this.db = deps.db
    this.clock = deps.clock
    this.hypervisor = deps.hypervisor
    this.tasks = deps.tasks
    this.sshKeys = deps.sshKeys
  }

  /** The products on offer: specs, monthly price (excluding VAT), locations and billing periods. */
  products() {
    return VPS_PRODUCTS.map((p) => ({
      id: p.id,
      name: p.name,
      cpu: p.cpu,
      memory_mb: p.memory_mb,
      disk_gb: p.disk_gb,
      price: p.priceCents / 100,
      locations: [...p.locations],
      durations: [...VPS_DURATIONS],
    }))
  }

  /** Checks an order's input; returns the product, the billing period and the SSH keys. */
  async checkOrder(accountId: number, input: ProvisionInput) {
    const product = findProduct(input.productId)
    if (!product) throw errors.vpsUnknownProduct()
    const image = findImage(await this.hypervisor.listImages(), input.imageId)
    const hostname = input.hostname.trim().replace(/\.$/, '').toLowerCase()
    if (!isHostname(hostname)) throw errors.vpsInvalidHostname()
    const location = input.location ?? product.locations[0]
    if (!product.locations.includes(location)) throw errors.vpsUnknownLocation(product.locations)
    const months = input.billingMonths ?? 1
    if (!(VPS_DURATIONS as readonly number[]).includes(months)) throw errors.vpsInvalidDuration(VPS_DURATIONS)
    const keys = await this.sshKeys.publicKeys(accountId, input.sshKeyIds ?? [])
    return { product, image, hostname, location, months, keys }
  }

  /** Creates a VPS: allocates the instance on the hypervisor and queues the install task. */
  async provision(accountId: number, input: ProvisionInput): Promise<{ vpsId: number; taskId: number }> {
    const { product, image, hostname, location, months, keys } = await this.checkOrder(accountId, input)
    const created = await viaDriver(() =>
      this.hypervisor.createInstance({
        tenant: String(accountId),
        location,
        host: input.host,
        imageId: image.slug,
        hostname,
        cpu: product.cpu,
        memoryMb: product.memory_mb,
        diskGb: product.disk_gb,
        rootPassword: newPassword(),
        sshKeys: keys,
      }),
    )
    const now = iso(this.clock.now())
    const ids = await this.db.transaction().execute(async (trx) => {
      const v = await repo.insertVps(trx, {
        account_id: accountId,
        name: input.name ?? hostname.split('.')[0],
        hostname,
        product_id: product.id,
        location,
        host: created.host,
        instance_ref: created.ref,
        image_id: image.slug,
        cpu: product.cpu,
        memory_mb: product.memory_mb,
        disk_gb: product.disk_gb,
        status: 'installing',
        rescue: 0,
        ipv4: created.ipv4,
        ipv6: created.ipv6,
        reverse_dns: '{}',
        firewall: JSON.stringify({ enabled: false, rules: [] }),
        billing_months: months,
        task_id: null,
        cancellation_date: null,
        order_item_id: input.orderItemId ?? null,
        created_at: now,
        updated_at: now,
      })
      const t = await repo.insertTask(trx, {
        vps_id: v.id,
        account_id: accountId,
        action: 'create',
        status: 'queued',
        progress: 0,
        attempts: 0,
        params: '{}',
        previous_status: 'installing',
        operation_ref: created.operation.ref,
        created_at: now,
        updated_at: now,
      })
      await repo.holdVps(trx, accountId, v.id, t.id, 'installing', now)
      await this.tasks.enqueue(trx, accountId, t.id)
      return { vpsId: v.id, taskId: t.id }
    })
    return ids
  }

  /** The orders module's processor for `vps` items: provisions the ordered VPS; a refusal becomes the item's error. */
  async processOrderItem(item: { id: number; accountId: number; details: unknown }): Promise<{
    errors: Array<{ code: string; description: string }>
    result?: unknown
  }> {
    const done = await repo.findVpsByOrderItem(this.db, item.accountId, item.id)
    if (done) return { errors: [], result: { vps_id: done.id } }
    try {
      const r = await this.provision(item.accountId, { ...(item.details as ProvisionInput), orderItemId: item.id })
      return { errors: [], result: { vps_id: r.vpsId } }
    } catch (err) {
      if (err instanceof ApiError && err.status === 400) return { errors: [{ code: 'vps', description: err.message }] }
      throw err
    }
  }
}
