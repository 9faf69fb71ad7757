import { parseArgs } from 'node:util'
import type { Context } from '../context.js'
import { ApiError } from '../errors.js'
import { EVENT_TYPES } from '../modules/webhooks/webhook-events.js'
import { AdminUsageError } from './admin.js'

interface Out {
  write(s: string): unknown
}

/** The trigger command's help. */
export const TRIGGER_HELP = `Usage: hostapi trigger EVENT [--account CUSTOMER_NUMBER] [--data JSON]

  Sends a webhook event to an account's endpoints (sandbox mode only, HOSTAPI_SANDBOX=1), as
  POST /admin/v1/sandbox/events does: with what the real cause sends about the account's own resource, or the
  documented example when it has none. --data (a JSON object) is merged over the payload's data. --account may be
  left out when there is one account. A running server delivers the event at its next job poll.
  Prints the event sent (JSON): its id (webhook-id), type, data and how many endpoints receive it.

  Events: ${EVENT_TYPES.join(', ')}
`

/** Runs `hostapi trigger …` on a context in sandbox mode; returns the exit code (1: refused, with the reason). */
export async function runTrigger(ctx: Context, argv: string[], out: Out, err: Out): Promise<number> {
  if (argv[0] === undefined || argv[0] === 'help' || argv[0] === '--help') {
    out.write(TRIGGER_HELP)
    return 0
  }
  if (!ctx.config.sandbox.enabled)
    throw new AdminUsageError('hostapi trigger works in sandbox mode only: set HOSTAPI_SANDBOX=1 (as the server has)')
  const options = { account: { type: 'string' }, data: { type: 'string' } } as const
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; options: typeof options; allowPositionals: true }>>
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true })
  } catch (e) {
    throw new AdminUsageError(`${(e as Error).message}\n\n${TRIGGER_HELP}`)
  }
  const { values, positionals } = parsed
  if (positionals.length !== 1) throw new AdminUsageError(`Name one event\n\n${TRIGGER_HELP}`)
  const account = values.account === undefined ? undefined : Number(values.account)
  if (account !== undefined && !Number.isSafeInteger(account))
    throw new AdminUsageError(`Not a customer number: ${values.account}`)
  let data: Record<string, unknown> | undefined
  if (values.data !== undefined) {
    const parsedData: unknown = (() => {
      try {
        return JSON.parse(values.data)
      } catch {
        return undefined
      }
    })()
    if (typeof parsedData !== 'object' || parsedData === null || Array.isArray(parsedData))
      throw new AdminUsageError('--data must be a JSON object')
    data = parsedData as Record<string, unknown>
  }
  try {
    const sent = await ctx.services.sandboxEvents.trigger({ type: positionals[0], customer_number: account, data })
    out.write(`${JSON.stringify(sent, null, 2)}\n`)
    return 0
  } catch (e) {
    if (e instanceof ApiError) {
      err.write(`${e.message}\n`)
      return 1
    }
    throw e
  }
}
