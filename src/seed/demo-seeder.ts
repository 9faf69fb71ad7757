import type { Context } from '../context.types.js'

/** What an area adds to the demo account. */
export type DemoSeeder = (
  ctx: Context,
  account: { accountId: number; userId: number; customerNumber: number },
) => Promise<void>
