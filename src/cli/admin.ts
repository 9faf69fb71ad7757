import { parseArgs } from 'node:util'
import type { Context } from '../context.js'
import { ApiError } from '../errors.js'
import { SecretBoxError } from '../lib/secret-box.js'
import * as repo from '../modules/iam/iam.repository.js'
import { PERMISSIONS } from '../modules/iam/permissions.js'
import { permissionsOf } from '../modules/admin/admin-input.js'

export class AdminUsageError extends Error {}

interface Out {
  write(s: string): unknown
}

const HELP = `Usage: hostapi admin <command> [options]

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
  secrets rotate
      Re-seals every secret stored in the database with HOSTAPI_SECRET_KEY (or HOSTAPI_SECRET_KEY_FILE),
      opening those sealed before with a key in HOSTAPI_SECRET_KEY_PREVIOUS.
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
} as const

/** Runs one admin command; returns the exit code. Output meant for scripts goes to `out`, alone. */
export async function runAdmin(ctx: Context, argv: string[], out: Out, err: Out): Promise<number> {
  const [area, action, ...rest] = argv
  if (!area || area === 'help' || area === '--help') {
    out.write(HELP)
    return 0
  }
  let parsed
  try {
    parsed = parseArgs({ args: rest, options: OPTIONS, allowPositionals: true, strict: true })
  } catch (e) {
    throw new AdminUsageError(`${(e as Error).message}\n\n${HELP}`)
  }
  const { values: v, positionals } = parsed
  const iam = ctx.services.iam
  const need = (name: keyof typeof OPTIONS): string => {
    const value = v[name]
    if (typeof value !== 'string' || value === '') throw new AdminUsageError(`--${name} is required\n\n${HELP}`)
    return value
  }
  const account = async () => {
    const n = Number(need('account'))
    const row = Number.isInteger(n) ? await repo.findAccountByCustomerNumber(ctx.db, n) : undefined
    if (!row) throw new AdminUsageError(`No account with customer number ${v.account}`)
    return row
  }
  const ref = () => {
    if (positionals.length !== 1) throw new AdminUsageError(`Name one key by its prefix or id\n\n${HELP}`)
    return positionals[0]
  }

  try {
    switch (`${area} ${action}`) {
      case 'account create': {
        const email = need('email')
        const created = await iam.createAccount({
          name: need('name'),
          email,
          firstname: v.firstname ?? '',
          lastname: v.lastname ?? '',
        })
        out.write(`${created.customerNumber}\n`)
        return 0
      }
      case 'user create': {
        const acc = await account()
        const permissions = permissionsOf(v.permission ?? [])
        const id = await iam.createSubUser(acc.id, { email: need('email'), firstname: v.firstname ?? '', lastname: v.lastname ?? '', permissions })
        out.write(`${id}\n`)
        return 0
      }
      case 'key create': {
        let accountId: number
        let userId: number
        if (v.user) {
          const user = await repo.findUserById(ctx.db, Number(v.user))
          if (!user) throw new AdminUsageError(`No user with id ${v.user}`)
          if (v.account && (await account()).id !== user.account_id) throw new AdminUsageError('That user is not in that account')
          accountId = user.account_id
          userId = user.id
        } else {
          const acc = await account()
          const main = await repo.findMainUser(ctx.db, acc.id)
          if (!main) throw new AdminUsageError('The account has no main user')
          accountId = acc.id
          userId = main.id
        }
        const created = await iam.createKey(accountId, userId, {
          label: v.label,
          expiresAt: v.expires ? parseDate(v.expires) : null,
          allowedIps: v['allow-ip'] ?? [],
        })
        out.write(`${created.key}\n`)
        return 0
      }
      case 'key list': {
        const acc = await account()
        const keys = await iam.listKeys(acc.id)
        out.write(['prefix', 'id', 'user', 'label', 'expires', 'whitelist', 'last_used', 'revoked'].join('\t') + '\n')
        for (const k of keys) {
          out.write(
            [k.prefix, k.id, k.user_id, k.label || '-', k.expires_at ?? 'never', (JSON.parse(k.allowed_ips) as string[]).join(',') || 'any',
              k.last_used_at ? `${k.last_used_at} from ${k.last_used_ip}` : 'never', k.revoked_at ?? 'no'].join('\t') + '\n',
          )
        }
        return 0
      }
      case 'key revoke': {
        const acc = await account()
        await iam.revokeKey(acc.id, ref())
        err.write('revoked\n')
        return 0
      }
      case 'key whitelist': {
        const acc = await account()
        const list = await iam.setWhitelist(acc.id, ref(), v['allow-ip'] ?? [])
        err.write(`whitelist: ${list.join(', ') || 'any address'}\n`)
        return 0
      }
      case 'key expiry': {
        const acc = await account()
        const expires = need('expires')
        await iam.setExpiry(acc.id, ref(), expires === 'never' ? null : parseDate(expires))
        err.write(`expiry: ${expires}\n`)
        return 0
      }
      case 'account suspend':
      case 'account unsuspend': {
        const acc = await account()
        await ctx.services.adminAccounts.setSuspended(acc.customer_number, action === 'suspend')
        err.write(`${action === 'suspend' ? 'suspended' : 'active'}\n`)
        return 0
      }
      case 'token create': {
        const created = await ctx.services.admin.createToken(v.label ?? '')
        out.write(`${created.token}\n`)
        return 0
      }
      case 'token list': {
        out.write(['prefix', 'id', 'label', 'created', 'last_used', 'revoked'].join('\t') + '\n')
        for (const t of await ctx.services.admin.listTokens()) {
          out.write([t.prefix, t.id, t.label || '-', t.created_at, t.last_used_at ?? 'never', t.revoked_at ?? 'no'].join('\t') + '\n')
        }
        return 0
      }
      case 'token revoke': {
        if (positionals.length !== 1) throw new AdminUsageError(`Name one token by its prefix or id\n\n${HELP}`)
        await ctx.services.admin.revokeToken(positionals[0])
        err.write('revoked\n')
        return 0
      }
      case 'secrets rotate': {
        const rewritten = await ctx.services.secrets.rotate()
        err.write(`re-sealed ${rewritten} stored record(s) with the secret key ${ctx.secrets.box.currentKeyId}\n`)
        return 0
      }
      default:
        throw new AdminUsageError(`Unknown admin command: ${area} ${action ?? ''}\n\n${HELP}`)
    }
  } catch (e) {
    if (e instanceof ApiError || e instanceof SecretBoxError) {
      err.write(`${e.message}\n`)
      return 1
    }
    throw e
  }
}

function parseDate(text: string): Date {
  const d = new Date(/^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : text)
  if (Number.isNaN(d.getTime())) throw new AdminUsageError(`Not a date: ${text}`)
  return d
}
