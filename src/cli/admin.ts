import { parseArgs } from 'node:util'
import type { Context } from '../context.js'
import type { ZoneDrift } from '../drivers/dns/dns.js'
import { ApiError } from '../errors.js'
import { SecretBoxError } from '../lib/secret-box.js'
import * as repo from '../modules/iam/iam.repository.js'
import { isPermission, PERMISSIONS } from '../modules/iam/permissions.js'
import { permissionsOf } from '../modules/admin/admin-input.js'

export class AdminUsageError extends Error {}

interface Out {
  write(s: string): unknown
  /** A terminal: long commands show their progress there. */
  isTTY?: boolean
}

/** A drifted zone's line names at most this many record sets; the others are counted ("and 12 more"). */
export const LISTED_RRSETS = 10

/** The admin commands' help. */
export const ADMIN_HELP = `Usage: hostapi admin <command> [options]

  account create --name NAME --email EMAIL [--firstname F] [--lastname L]
      Creates an account with its main user; prints the customer number.
  user create --account CUSTOMER_NUMBER --email EMAIL [--firstname F] [--lastname L] [--permission NAME]...
      Creates a sub-user with the given permissions; prints the user id.
      Permissions: ${PERMISSIONS.join(', ')}
  key create (--account CUSTOMER_NUMBER | --user USER_ID) [--label L] [--expires YYYY-MM-DD|ISO] [--allow-ip IP|CIDR]...
      Creates an API key (for the main user when only --account is given); prints the key alone, once.
  key list --account CUSTOMER_NUMBER
      Lists the keys: prefix, id, user, label, expiry, whitelist, last use, revoked.
  key revoke --account CUSTOMER_NUMBER KEY_PREFIX|KEY_ID
  key whitelist --account CUSTOMER_NUMBER KEY_PREFIX|KEY_ID [--allow-ip IP|CIDR]...   (none: any address)
  key expiry --account CUSTOMER_NUMBER KEY_PREFIX|KEY_ID --expires YYYY-MM-DD|ISO|never
  account suspend|unsuspend --account CUSTOMER_NUMBER
      A suspended account's keys answer 401 until it is unsuspended.
  token create [--label L]
      Creates an admin token for the admin API (Authorization: Bearer); prints the token alone, once.
  token list
  token revoke TOKEN_PREFIX|TOKEN_ID
  dns resync [--domain NAME]...
      Rebuilds the DNS driver's zones (PowerDNS) from the database, all or those named; prints one line per zone
      that had drifted: zone, then what was missing, extra, differing (the first ${LISTED_RRSETS} record sets and how many
      more) or failed; then a summary on stderr. Exits 1 when any zone failed.
  order list [--status open|processing|error|completed|cancelled] [--account CUSTOMER_NUMBER]
      Lists orders of every account, newest first (the latest 100): id, account, status, total, created.
  order show ORDER_ID
      Prints an order with its items, invoices and processing jobs (JSON).
  order retry ORDER_ID
      Queues the processing of an order left open again, making its invoice first when it has none.
  order cancel ORDER_ID
      Cancels an order's undelivered items (freeing the domain names they held) and its queued processing.
  backup FILE
      SQLite: copies the database into FILE while servers run (one consistent snapshot, written whole or not at all).
      PostgreSQL: runs pg_dump -Fc (or says what to run when pg_dump is not installed). Keep the secret key apart.
  restore FILE
      SQLite: replaces the database with the backup FILE and migrates it; refuses a file that is not a hostapi
      backup, one of a newer schema, a secret key that does not open it, and a database a server has open (stop
      the servers first). The database it replaces is kept beside it. See docs/backup-restore.md.
  secrets rotate
      Re-seals every secret stored in the database (every sealed column, whatever drivers are configured here)
      with HOSTAPI_SECRET_KEY (or HOSTAPI_SECRET_KEY_FILE), opening those sealed before with a key in
      HOSTAPI_SECRET_KEY_PREVIOUS. See "Rotating the secret key" in docs/security.md for the steps of a fleet.
`

const OPTIONS = {
  name: { type: 'string' },
  email: { type: 'string' },
  firstname: { type: 'string' },
  lastname: { type: 'string' },
  account: { type: 'string' },
  user: { type: 'string' },
  permission: { type: 'string', multiple: true },
  label: { type: 'string' },
  expires: { type: 'string' },
  'allow-ip': { type: 'string', multiple: true },
  domain: { type: 'string', multiple: true },
  status: { type: 'string' },
} as const

type Values = { [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K] extends { multiple: true } ? string[] : string }
type AccountRow = NonNullable<Awaited<ReturnType<typeof repo.findAccountByCustomerNumber>>>

/** Whether an admin command line asks for the help (nothing, `help` or `--help`). */
export const isAdminHelp = (argv: string[]): boolean => !argv[0] || argv[0] === 'help' || argv[0] === '--help'

/** One parsed admin command line, with the helpers the commands share. */
interface Invocation {
  ctx: Context
  action: string | undefined
  v: Values
  positionals: string[]
  out: Out
  err: Out
  /** The value of a required option, or a usage error. */
  need(name: keyof typeof OPTIONS): string
  /** The account named by `--account`, or a usage error. */
  account(): Promise<AccountRow>
  /** The one key named by prefix or id, or a usage error. */
  ref(): string
}

/** A command; it may answer the exit code itself (a failure it reported), otherwise 0. */
type Command = (c: Invocation) => Promise<unknown>

/** Runs one admin command; returns the exit code. Output meant for scripts goes to `out`, alone. */
export async function runAdmin(ctx: Context, argv: string[], out: Out, err: Out): Promise<number> {
  const [area, action, ...rest] = argv
  if (isAdminHelp(argv)) {
    out.write(ADMIN_HELP)
    return 0
  }
  const parse = () => parseArgs({ args: rest, options: OPTIONS, allowPositionals: true, strict: true })
  let parsed: ReturnType<typeof parse>
  try {
    parsed = parse()
  } catch (e) {
    throw new AdminUsageError(`${(e as Error).message}\n\n${ADMIN_HELP}`)
  }
  const { values: v, positionals } = parsed
  const need = (name: keyof typeof OPTIONS): string => {
    const value = v[name]
    if (typeof value !== 'string' || value === '') throw new AdminUsageError(`--${name} is required\n\n${ADMIN_HELP}`)
    return value
  }
  const account = async () => {
    const n = Number(need('account'))
    const row = Number.isInteger(n) ? await repo.findAccountByCustomerNumber(ctx.db, n) : undefined
    if (!row) throw new AdminUsageError(`No account with customer number ${v.account}`)
    return row
  }
  const ref = () => {
    if (positionals.length !== 1) throw new AdminUsageError(`Name one key by its prefix or id\n\n${ADMIN_HELP}`)
    return positionals[0]
  }

  const command = COMMANDS.get(`${area} ${action}`)
  if (!command) throw new AdminUsageError(`Unknown admin command: ${area} ${action ?? ''}\n\n${ADMIN_HELP}`)
  try {
    const code = await command({ ctx, action, v, positionals, out, err, need, account, ref })
    return typeof code === 'number' ? code : 0
  } catch (e) {
    if (e instanceof ApiError || e instanceof SecretBoxError) {
      err.write(`${e.message}\n`)
      return 1
    }
    throw e
  }
}

const accountCreate: Command = async ({ ctx, v, out, need }) => {
  const email = need('email')
  const created = await ctx.services.iam.createAccount({
    name: need('name'),
    email,
    firstname: v.firstname ?? '',
    lastname: v.lastname ?? '',
  })
  out.write(`${created.customerNumber}\n`)
}

const accountSuspend: Command = async ({ ctx, action, err, account }) => {
  const acc = await account()
  await ctx.services.adminAccounts.setSuspended(acc.customer_number, action === 'suspend')
  err.write(`${action === 'suspend' ? 'suspended' : 'active'}\n`)
}

const userCreate: Command = async ({ ctx, v, out, need, account }) => {
  const unknown = (v.permission ?? []).filter((name) => !isPermission(name))
  if (unknown.length) {
    throw new AdminUsageError(`Unknown permission: ${unknown.join(', ')}. Valid names: ${PERMISSIONS.join(', ')}`)
  }
  const acc = await account()
  const permissions = permissionsOf(v.permission ?? [])
  const user = { email: need('email'), firstname: v.firstname ?? '', lastname: v.lastname ?? '', permissions }
  const id = await ctx.services.iam.createSubUser(acc.id, user)
  out.write(`${id}\n`)
}

const keyCreate: Command = async ({ ctx, v, out, account }) => {
  let accountId: number
  let userId: number
  if (v.user) {
    const user = await repo.findUserById(ctx.db, Number(v.user))
    if (!user) throw new AdminUsageError(`No user with id ${v.user}`)
    if (v.account && (await account()).id !== user.account_id) {
      throw new AdminUsageError('That user is not in that account')
    }
    accountId = user.account_id
    userId = user.id
  } else {
    const acc = await account()
    const main = await repo.findMainUser(ctx.db, acc.id)
    if (!main) throw new AdminUsageError('The account has no main user')
    accountId = acc.id
    userId = main.id
  }
  const created = await ctx.services.iam.createKey(accountId, userId, {
    label: v.label,
    expiresAt: v.expires ? parseDate(v.expires) : null,
    allowedIps: v['allow-ip'] ?? [],
  })
  out.write(`${created.key}\n`)
}

const keyList: Command = async ({ ctx, out, account }) => {
  const acc = await account()
  const keys = await ctx.services.iam.listKeys(acc.id)
  out.write(`${['prefix', 'id', 'user', 'label', 'expires', 'whitelist', 'last_used', 'revoked'].join('\t')}\n`)
  for (const k of keys) {
    const whitelist = k.allowed_ips.join(',') || 'any'
    const revoked = k.revoked_at ?? 'no'
    const lastUsed = k.last_used_at ? `${k.last_used_at} from ${k.last_used_ip}` : 'never'
    const row = [k.prefix, k.id, k.user_id, k.label || '-', k.expires_at ?? 'never', whitelist, lastUsed, revoked]
    out.write(`${row.join('\t')}\n`)
  }
}

const keyRevoke: Command = async ({ ctx, err, account, ref }) => {
  const acc = await account()
  await ctx.services.iam.revokeKey(acc.id, ref())
  err.write('revoked\n')
}

const keyWhitelist: Command = async ({ ctx, v, err, account, ref }) => {
  const acc = await account()
  const list = await ctx.services.iam.setWhitelist(acc.id, ref(), v['allow-ip'] ?? [])
  err.write(`whitelist: ${list.join(', ') || 'any address'}\n`)
}

const keyExpiry: Command = async ({ ctx, err, need, account, ref }) => {
  const acc = await account()
  const expires = need('expires')
  await ctx.services.iam.setExpiry(acc.id, ref(), expires === 'never' ? null : parseDate(expires))
  err.write(`expiry: ${expires}\n`)
}

const tokenCreate: Command = async ({ ctx, v, out }) => {
  const created = await ctx.services.admin.createToken(v.label ?? '')
  out.write(`${created.token}\n`)
}

const tokenList: Command = async ({ ctx, out }) => {
  out.write(`${['prefix', 'id', 'label', 'created', 'last_used', 'revoked'].join('\t')}\n`)
  for (const t of await ctx.services.admin.listTokens()) {
    const row = [t.prefix, t.id, t.label || '-', t.created_at, t.last_used_at ?? 'never', t.revoked_at ?? 'no']
    out.write(`${row.join('\t')}\n`)
  }
}

const tokenRevoke: Command = async ({ ctx, positionals, err }) => {
  if (positionals.length !== 1) throw new AdminUsageError(`Name one token by its prefix or id\n\n${ADMIN_HELP}`)
  await ctx.services.admin.revokeToken(positionals[0])
  err.write('revoked\n')
}

const secretsRotate: Command = async ({ ctx, err }) => {
  const rewritten = await ctx.services.secrets.rotate()
  err.write(`re-sealed ${rewritten} stored value(s) with the secret key ${ctx.secrets.box.currentKeyId}\n`)
}

/** A zone's error is cut to this many characters. */
const ERROR_CHARS = 300

/** What one drifted zone's line says after the zone: missing, extra, the record sets that differed, or the error. */
function driftText(d: ZoneDrift): string {
  if (d.error) return `failed: ${d.error.length > ERROR_CHARS ? `${d.error.slice(0, ERROR_CHARS)}…` : d.error}`
  if (d.missing) return 'missing'
  if (d.extra) return 'extra'
  const more = d.differing.length - LISTED_RRSETS
  return `differing: ${d.differing.slice(0, LISTED_RRSETS).join(', ')}${more > 0 ? ` and ${more} more` : ''}`
}

/**
 * Prints one line per drifted zone on `out` (capped, see driftText), the progress on a terminal and a summary on
 * `err`; exits 1 when any zone could not be compared or fixed.
 */
const dnsResync: Command = async ({ ctx, v, out, err }) => {
  let compared = 0
  let shown = 0
  const drift = await ctx.services.zoneDelivery.resync(v.domain, (done, total) => {
    compared = done
    // On a terminal, rewritten in place a few times a second.
    if (err.isTTY && (done === total || Date.now() - shown > 200)) {
      shown = Date.now()
      err.write(`\rresync: ${done}/${total} zone(s) compared`)
    }
  })
  if (err.isTTY && shown) err.write('\n')
  for (const d of drift) out.write(`${d.zone}\t${driftText(d)}\n`)
  const failed = drift.filter((d) => d.error).length
  err.write(`resync: ${compared} zone(s) compared, ${drift.length - failed} drifted and fixed, ${failed} failed\n`)
  return failed === 0 ? 0 : 1
}

const ORDER_STATUSES = ['open', 'processing', 'error', 'completed', 'cancelled'] as const

const orderList: Command = async ({ ctx, v, out }) => {
  const status = v.status as (typeof ORDER_STATUSES)[number] | undefined
  if (status !== undefined && !ORDER_STATUSES.includes(status))
    throw new AdminUsageError(`Unknown order status ${status}: ${ORDER_STATUSES.join(', ')}`)
  const account = v.account === undefined ? undefined : Number(v.account)
  if (account !== undefined && !Number.isInteger(account))
    throw new AdminUsageError(`Not a customer number: ${v.account}`)
  const { orders } = await ctx.services.ordersAdmin.list({ status, account, limit: 100 })
  out.write(`${['id', 'account_id', 'status', 'total_cents', 'created'].join('\t')}\n`)
  for (const o of orders) out.write(`${[o.id, o.account_id, o.status, o.total_cents, o.created].join('\t')}\n`)
}

/** The order named by the one positional argument, or a usage error. */
function orderId(positionals: string[]): number {
  const id = positionals.length === 1 ? Number(positionals[0]) : Number.NaN
  if (!Number.isSafeInteger(id) || id < 1) throw new AdminUsageError(`Name one order by its id\n\n${ADMIN_HELP}`)
  return id
}

const orderShow: Command = async ({ ctx, positionals, out }) => {
  out.write(`${JSON.stringify(await ctx.services.ordersAdmin.get(orderId(positionals)), null, 2)}\n`)
}

const orderRepair: Command = async ({ ctx, action, positionals, out }) => {
  const id = orderId(positionals)
  const admin = ctx.services.ordersAdmin
  const view = action === 'retry' ? await admin.retry(id) : await admin.cancel(id)
  out.write(`${view.status}\n`)
}

/** Every admin command by `<area> <action>`, as ADMIN_HELP lists them. */
const COMMANDS = new Map<string, Command>([
  ['account create', accountCreate],
  ['user create', userCreate],
  ['key create', keyCreate],
  ['key list', keyList],
  ['key revoke', keyRevoke],
  ['key whitelist', keyWhitelist],
  ['key expiry', keyExpiry],
  ['account suspend', accountSuspend],
  ['account unsuspend', accountSuspend],
  ['token create', tokenCreate],
  ['token list', tokenList],
  ['token revoke', tokenRevoke],
  ['dns resync', dnsResync],
  ['secrets rotate', secretsRotate],
  ['order list', orderList],
  ['order show', orderShow],
  ['order retry', orderRepair],
  ['order cancel', orderRepair],
])

function parseDate(text: string): Date {
  const d = new Date(/^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : text)
  if (Number.isNaN(d.getTime())) throw new AdminUsageError(`Not a date: ${text}`)
  return d
}
