import type { TestAccount, TestApp } from './app.js'
import { eventually } from './wait.js'

/** A certificate package of `owner` (one year of `productId`), once the running job runner has made it. */
export async function certificatePackage(t: TestApp, owner: TestAccount, productId: number): Promise<number> {
  const { order_id: orderId } = await t.ctx.services.certificates.order(owner.accountId, {
    product_id: productId,
    duration: 1,
  })
  return eventually(
    async () => {
      const { items } = await t.ctx.services.orders.get(owner.accountId, orderId)
      return (items[0].result as { certificate_id?: number } | null)?.certificate_id ?? false
    },
    { what: `order ${orderId} makes a certificate`, timeoutMs: 10_000 },
  )
}
