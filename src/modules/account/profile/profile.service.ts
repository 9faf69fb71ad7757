import { createHash, randomBytes } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Clock } from '../../../clock.js'
import { iso } from '../../../clock.js'
import type { DB } from '../../../db/tables.js'
import { errors } from '../../../errors.js'
import type { Mailer } from '../../mail/mail.service.js'
import type { AccountProfile } from '../account.tables.js'
import * as repo from './profile.repository.js'
import type { DryRun } from '../../../lib/dry-run.js'
import { normalisePhone } from '../../../lib/phone.js'

/** The profile as the API shows it: the stored fields less the bookkeeping ones, and the account type. */
export type ProfileView = Omit<
  AccountProfile,
  'id' | 'account_id' | 'pending_email_token_hash' | 'pending_email_expires_at' | 'default_paymethod_id' | 'updated_at'
> & { account_type: 'business' | 'private' }

/** The fields of the profile body that may be left out. */
type OptionalProfileField = 'company' | 'email_invoices' | 'company_vat_number' | 'phone_country_code'

/**
 * The body of `PUT /account/profile/`: a full replace, except the optional fields. The route's schema
 * (UpdateProfileBody in profile.schemas.ts) checks the text; the type check keeps the two in step.
 */
export type ProfileInput = Omit<ProfileView, OptionalProfileField | 'pending_email' | 'account_type'> &
  Partial<Pick<ProfileView, OptionalProfileField>>

const VERIFY_TTL_MS = 48 * 3600_000
const hashToken = (t: string) => createHash('sha256').update(t).digest('hex')

/** What ProfileService is built on. */
export interface ProfileServiceDeps {
  db: Kysely<DB>
  clock: Clock
  mail: Mailer
}

/** The account holder's profile: name, address, contact details; e-mail changes need verification. */
export class ProfileService {
  private readonly db: Kysely<DB>
  private readonly clock: Clock
  private readonly mail: Mailer

  constructor(deps: ProfileServiceDeps) {
    this.db = deps.db
    this.clock = deps.clock
    this.mail = deps.mail
  }

  /** The stored profile, or one made from the account and its main user when none is stored yet. */
  async row(accountId: number): Promise<AccountProfile> {
    const stored = await repo.findProfile(this.db, accountId)
    if (stored) return stored
    const src = await repo.profileSource(this.db, accountId)
    if (!src) throw errors.accountNotFound()
    return {
      id: 0,
      account_id: accountId,
      firstname: src.firstname,
      lastname: src.lastname,
      company: src.name,
      address: '',
      house_number: '',
      zipcode: '',
      city: '',
      country_code: 'NL',
      phone: '',
      phone_country_code: '+31',
      email: src.email,
      email_invoices: '',
      company_vat_number: '',
      pending_email: null,
      pending_email_token_hash: null,
      pending_email_expires_at: null,
      default_paymethod_id: null,
      updated_at: iso(this.clock.now()),
    }
  }

  async get(accountId: number): Promise<ProfileView> {
    return view(await this.row(accountId), this.clock.now())
  }

  /** Replaces the profile. A new e-mail address is kept pending and a verification mail is sent to it. */
  async update(
    accountId: number,
    input: ProfileInput,
    opts: DryRun = {},
  ): Promise<{ profile: ProfileView; verificationSent: boolean }> {
    const current = await this.row(accountId)
    if (input.company !== undefined && input.company.trim() !== current.company) throw errors.companyReadOnly()
    const now = this.clock.now()
    const email = input.email.trim()
    const phone = normalisePhone(input.phone, input.phone_country_code)
    if ('missing' in phone) throw errors.missingPhoneCountryCode()
    if ('problem' in phone) throw errors.invalidPhone(phone.field, phone.problem)
    const changes = {
      firstname: input.firstname.trim(),
      lastname: input.lastname.trim(),
      address: input.address.trim(),
      house_number: input.house_number.trim(),
      zipcode: input.zipcode.trim().toUpperCase(),
      city: input.city.trim(),
      country_code: input.country_code.toUpperCase(),
      phone: phone.phone,
      phone_country_code: phone.phone_country_code,
      email_invoices: input.email_invoices === undefined ? current.email_invoices : input.email_invoices.trim(),
      company_vat_number:
        input.company_vat_number === undefined
          ? current.company_vat_number
          : input.company_vat_number.replace(/[\s.]/g, '').toUpperCase(),
      updated_at: iso(now),
    }
    let token: string | null = null
    let pending: Pick<AccountProfile, 'pending_email' | 'pending_email_token_hash' | 'pending_email_expires_at'> = {
      pending_email: current.pending_email,
      pending_email_token_hash: current.pending_email_token_hash,
      pending_email_expires_at: current.pending_email_expires_at,
    }
    if (email.toLowerCase() !== current.email.toLowerCase()) {
      token = randomBytes(24).toString('base64url')
      pending = {
        pending_email: email,
        pending_email_token_hash: hashToken(token),
        pending_email_expires_at: iso(new Date(now.getTime() + VERIFY_TTL_MS)),
      }
    }
    if (opts.dryRun)
      return { profile: view({ ...current, ...changes, ...pending }, now), verificationSent: token !== null }
    // The change and the mail asking to confirm it commit together.
    await this.db.transaction().execute(async (trx) => {
      await repo.upsertProfile(trx, { ...current, id: undefined, ...changes, ...pending }, { ...changes, ...pending })
      if (token) {
        await this.mail.send(trx, {
          to: email,
          accountId,
          kind: 'profile.verify_email',
          subject: 'Confirm your new e-mail address',
          text:
            `Hello ${changes.firstname},\n\nSomeone asked to change the e-mail address of your account to this address.\n` +
            `Confirm it within 48 hours by sending this code to POST /api/v2/account/profile/confirm-email as {"token": "<code>"}:\n\n  ${token}\n\n` +
            'If this was not you, ignore this message; nothing changes.\n',
        })
        // The current address hears of the request too, so a stolen key cannot move the account's mail unnoticed.
        await this.mail.send(trx, {
          to: current.email,
          accountId,
          kind: 'profile.email_change_requested',
          subject: 'A change of your e-mail address was requested',
          text:
            `Hello ${changes.firstname},\n\nA change of your account's e-mail address to ${email} was requested through the API.\n` +
            'It takes effect only when the code sent to the new address is confirmed. If this was not you, revoke your API keys.\n',
        })
      }
    })
    return { profile: await this.get(accountId), verificationSent: token !== null }
  }

  /** Confirms the account's pending e-mail change with the code from the verification mail. */
  async confirmEmail(accountId: number, token: string, opts: DryRun = {}): Promise<ProfileView> {
    const row = await repo.findProfileByEmailToken(this.db, accountId, hashToken(token))
    if (!row?.pending_email || !row.pending_email_expires_at || row.pending_email_expires_at <= iso(this.clock.now())) {
      throw errors.invalidEmailToken()
    }
    if (opts.dryRun) return view({ ...row, email: row.pending_email, pending_email: null }, this.clock.now())
    await repo.updateProfile(this.db, accountId, {
      email: row.pending_email,
      pending_email: null,
      pending_email_token_hash: null,
      pending_email_expires_at: null,
      updated_at: iso(this.clock.now()),
    })
    return this.get(accountId)
  }

  /** Sets the default payment method (null = bank transfer), storing the profile if it was not stored yet. */
  async setDefaultPaymethod(accountId: number, paymethodId: number | null): Promise<void> {
    const current = await this.row(accountId)
    await repo.upsertProfile(
      this.db,
      { ...current, id: undefined, default_paymethod_id: paymethodId },
      { default_paymethod_id: paymethodId },
    )
  }
}

function view(p: AccountProfile, now: Date): ProfileView {
  const pendingValid =
    p.pending_email !== null && p.pending_email_expires_at !== null && p.pending_email_expires_at > iso(now)
  return {
    firstname: p.firstname,
    lastname: p.lastname,
    company: p.company,
    address: p.address,
    house_number: p.house_number,
    zipcode: p.zipcode,
    city: p.city,
    country_code: p.country_code,
    phone: p.phone,
    phone_country_code: p.phone_country_code,
    email: p.email,
    email_invoices: p.email_invoices,
    company_vat_number: p.company_vat_number,
    pending_email: pendingValid ? p.pending_email : null,
    account_type: accountType(p),
  }
}

// An account held by a person carries no company of its own: no name, or the holder's own name, and no VAT number.
function accountType(p: AccountProfile): ProfileView['account_type'] {
  if (p.company_vat_number !== '') return 'business'
  const company = p.company.trim().toLowerCase()
  const holder = `${p.firstname} ${p.lastname}`.trim().toLowerCase()
  return company === '' || company === holder ? 'private' : 'business'
}
