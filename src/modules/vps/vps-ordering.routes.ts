import { Type } from 'typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { DryRunQuery, dry } from '../../http/dry-run.js'
import { Envelope, ok } from '../../http/schemas.js'
import { OrderBody, Product } from './vps.schemas.js'

/** Ordering a VPS: the products on offer and the order itself. */
export const vpsOrderingRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const ordering = () => app.services.vps.ordering

  app.get(
    '/vps/products',
    {
      config: { area: 'vps' },
      schema: {
        operationId: 'listVpsProducts',
        tags: ['VPS'],
        summary: 'List VPS products',
        response: {
          200: Envelope(Type.Object({ products: Type.Array(Product) }), {
            products: [
              {
                id: 'vps-m',
                name: 'VPS M',
                cpu: 2,
                memory_mb: 4096,
                disk_gb: 80,
                price: 9.99,
                locations: ['ams', 'rtm'],
                durations: [1, 3, 6, 12, 24],
              },
            ],
          }),
        },
      },
    },
    async () => ok({ products: ordering().products() }),
  )

  app.post(
    '/vps/order',
    {
      config: { area: 'order', idempotent: true },
      schema: {
        operationId: 'orderVps',
        querystring: DryRunQuery,
        tags: ['VPS'],
        summary: 'Order a VPS',
        description:
          'Checks the order, charges it and provisions the VPS asynchronously through the order ' +
          '(see GET /orders/{order_id}). The new VPS has a random root password: install SSH keys (`ssh_key_ids`) ' +
          'or use reset-password. `?test=1`: checks the order and answers `order_id` 0 without ordering or charging.',
        body: OrderBody,
        response: { 200: Envelope(Type.Object({ order_id: Type.Integer() }), { order_id: 1202 }) },
      },
    },
    async (req) => {
      const accountId = req.caller.accountId
      const input = {
        productId: req.body.product_id,
        imageId: req.body.image_id,
        hostname: req.body.hostname,
        location: req.body.location,
        sshKeyIds: req.body.ssh_key_ids,
        billingMonths: req.body.duration,
      }
      const checked = await ordering().checkOrder(accountId, input)
      if (dry(req).dryRun) return ok({ order_id: 0 })
      const { orderId } = await app.services.orders.createOrder(accountId, [
        {
          type: 'vps',
          name: checked.hostname,
          details: {
            ...input,
            imageId: checked.image.slug,
            hostname: checked.hostname,
            location: checked.location,
            billingMonths: checked.months,
          },
          priceCents: checked.product.priceCents * checked.months,
          description: `${checked.product.name} ${checked.hostname}, ${checked.months} month(s)`,
        },
      ])
      return ok({ order_id: orderId })
    },
  )
}
