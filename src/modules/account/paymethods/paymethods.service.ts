import type { Kysely } from 'kysely'
import type { Clock } from '../../../clock.js'
import { iso } from '../../../clock.js'
import type { DB } from '../../../db/tables.js'
import { errors } from '../../../errors.js'
import type { PaymentMethodInput, PaymentsDriver } from '../../../drivers/payments/payments.js'
import type { ProfileService } from '../profile/profile.service.js'
import * as repo from './paymethods.repository.js'
import { MAX_ID } from '../../../db/ids.js'
import type { DryRun } from '../../../lib/dry-run.js'

/** The `paymethod` value (and `default`) for paying by bank transfer. */
export const BANK_TRANSFER = 'bank_transfer'

/** The default payment method: `default` is its type (`bank_transfer` when none is chosen), `default_paymethod_id` its id or ''. */
export interface DefaultPaymethod {
  default: string
  default_paymethod_id: string
}

/** What PaymethodsService is built on. */
export interface PaymethodsServiceDeps {
  db: Kysely<DB>
  clock: Clock
  payments: PaymentsDriver
  profiles: ProfileService
}

/** Payment methods of the account and which one is the default. */
export class PaymethodsService {
  private readonly db: Kysely<DB>
  private readonly clock: Clock
  private readonly payments: PaymentsDriver
  private readonly profiles: ProfileService

  constructor(deps: PaymethodsServiceDeps) {
    this.db = deps.db
    this.clock = deps.clock
    this.payments = deps.payments
    this.profiles = deps.profiles
  }

  async list(accountId: number) {
    const [methods, current] = await Promise.all([repo.listPaymethods(this.db, accountId), this.current(accountId)])
    return {
      ...current,
      paymethods: methods.map((m) => ({
        id: String(m.id),
        type: m.type,
        description: m.description,
        holder: m.holder,
        expires: m.expires,
        is_default: String(m.id) === current.default_paymethod_id,
      })),
    }
  }

  /** Chooses the default: a stored method by id, or bank transfer. */
  async setDefault(
    accountId: number,
    input: { default_paymethod_id?: string | number; paymethod?: string },
    opts: DryRun = {},
  ): Promise<DefaultPaymethod> {
    const byId = input.default_paymethod_id !== undefined && input.default_paymethod_id !== ''
    const byName = input.paymethod !== undefined
    if (byId === byName) throw errors.paymethodChoice()
    if (byName) {
      if (opts.dryRun) return { default: BANK_TRANSFER, default_paymethod_id: '' }
      await this.profiles.setDefaultPaymethod(accountId, null)
    } else {
      const ref = String(input.default_paymethod_id)
      const id = /^[0-9]{1,10}$/.test(ref) && Number(ref) <= MAX_ID ? Number(ref) : null
      const method = id === null ? undefined : await repo.findPaymethod(this.db, accountId, id)
      if (!method) throw errors.unknownPaymethod(ref)
      if (opts.dryRun) return { default: method.type, default_paymethod_id: String(method.id) }
      await this.profiles.setDefaultPaymethod(accountId, method.id)
    }
    return this.current(accountId)
  }

  /** Stores a payment method with the payments driver (operator and demo data; customers add methods through the provider's checkout). */
  async add(accountId: number, input: PaymentMethodInput): Promise<string> {
    const registered = await this.payments.registerMethod(accountId, input)
    const row = await repo.insertPaymethod(this.db, {
      account_id: accountId,
      type: input.type,
      description: registered.description,
      holder: input.holder,
      expires: input.expires ?? null,
      driver_reference: registered.reference,
      created_at: iso(this.clock.now()),
    })
    return String(row.id)
  }

  private async current(accountId: number): Promise<DefaultPaymethod> {
    const profile = await this.profiles.row(accountId)
    if (profile.default_paymethod_id !== null) {
      const m = await repo.findPaymethod(this.db, accountId, profile.default_paymethod_id)
      if (m) return { default: m.type, default_paymethod_id: String(m.id) }
    }
    return { default: BANK_TRANSFER, default_paymethod_id: '' }
  }
}
