import type { TestAccount, TestApp } from './app.js'

/** A certificate package of `owner` (one year of `productId`), once the running job runner has made it. */
export async function certificatePackage(t: TestApp, owner: TestAccount, productId: number): Promise<number> {
  const { order_id: orderId } = await t.ctx.services.certificates.order(owner.accountId, {
    product_id: productId,
    duration: 1,
  })
  const start = Date.now()
  for (;;) {
    const { items } = await t.ctx.services.orders.get(owner.accountId, orderId)
    const result = items[0].result as { certificate_id?: number } | null
    if (result?.certificate_id) return result.certificate_id
    if (Date.now() - start > 10_000) throw new Error(`order ${orderId} made no certificate`)
    await new Promise((r) => setTimeout(r, 50))
  }
}
