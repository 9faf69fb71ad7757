import type { Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import { iso, ymdhms } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import { errors } from '../../errors.js'
import { pageOf, pagination } from '../../lib/paging.js'
import { amount } from '../../lib/money.js'
import type { AffiliateCommission, AffiliatePayment } from './affiliate.tables.js'
import * as repo from './affiliate.repository.js'

type ListQuery = { page?: number; limit?: number; search?: string }

const time = (isoText: string) => ymdhms(new Date(isoText))

/** The spec's commission row: money as numbers, flags as integers, `payment_id` null until paid out. */
const commissionRow = (c: AffiliateCommission) => ({
  id: c.id,
  date: time(c.date),
  order_nr: c.order_nr,
  sub_id: c.sub_id,
  sale_amount: amount(c.sale_amount_cents),
  commission_amount: amount(c.commission_amount_cents),
  approved: c.approved,
  paidout: c.paidout,
  payment_id: c.payment_id,
})

const statusOf = (c: AffiliateCommission) =>
  c.paidout ? 'paid' : c.approved ? 'approved' : c.rejected ? 'rejected' : 'pending'

/** What AffiliateService is built on. */
export interface AffiliateServiceDeps {
  db: Kysely<DB>
  clock: Clock
}

/** Commissions earned by referring customers, and the payments that pay them out. */
export class AffiliateService {
  private readonly db: Kysely<DB>
  private readonly clock: Clock

  constructor(deps: AffiliateServiceDeps) {
    this.db = deps.db
    this.clock = deps.clock
  }

  async listCommissions(accountId: number, query: ListQuery) {
    const page = pageOf(query)
    const total = await repo.countCommissions(this.db, accountId, query.search)
    const pag = pagination(page, total)
    const rows = await repo.listCommissions(this.db, accountId, {
      search: query.search,
      limit: page.limit,
      offset: page.offset,
    })
    return { commissions: rows.map(commissionRow), pagination: pag }
  }

  /** The full record; `rejection_reason` is present when the commission is not approved (null while pending). */
  async getCommission(accountId: number, id: number) {
    const c = await repo.findCommission(this.db, accountId, id)
    if (!c) throw errors.commissionNotFound()
    return {
      ...commissionRow(c),
      description: c.description,
      status: statusOf(c),
      ...(c.approved ? {} : { rejection_reason: c.rejection_reason }),
    }
  }

  async listPayments(accountId: number, query: ListQuery) {
    const page = pageOf(query)
    const total = await repo.countPayments(this.db, accountId, query.search)
    const pag = pagination(page, total)
    const rows = await repo.listPayments(this.db, accountId, {
      search: query.search,
      limit: page.limit,
      offset: page.offset,
    })
    return {
      payments: rows.map((p) => ({ ...paymentRow(p), commission_count: Number(p.commission_count ?? 0) })),
      pagination: pag,
    }
  }

  async getPayment(accountId: number, id: number) {
    const p = await repo.findPayment(this.db, accountId, id)
    if (!p) throw errors.affiliatePaymentNotFound()
    const commissions = await repo.commissionsOfPayment(this.db, accountId, id)
    return { ...paymentRow(p), commission_count: commissions.length, commissions: commissions.map(commissionRow) }
  }

  /** Records a commission for an order a referred customer placed (pending until approved). */
  async addCommission(
    accountId: number,
    input: {
      orderNr: number
      subId?: string
      description?: string
      saleCents: number
      commissionCents: number
      date?: Date
    },
  ) {
    const { id } = await repo.insertCommission(this.db, {
      account_id: accountId,
      date: iso(input.date ?? this.clock.now()),
      order_nr: input.orderNr,
      sub_id: input.subId ?? '',
      description: input.description ?? '',
      sale_amount_cents: input.saleCents,
      commission_amount_cents: input.commissionCents,
      approved: 0,
      rejected: 0,
      rejection_reason: null,
      paidout: 0,
      payment_id: null,
    })
    return id
  }

  /** Approves a pending commission (operator). */
  async approve(accountId: number, id: number): Promise<void> {
    const c = await repo.findCommission(this.db, accountId, id)
    if (!c) throw errors.commissionNotFound()
    await repo.updateCommission(this.db, accountId, id, { approved: 1, rejected: 0, rejection_reason: null })
  }

  /** Rejects a commission that is not paid out yet, with the reason the affiliate sees (operator). */
  async reject(accountId: number, id: number, reason: string): Promise<void> {
    const c = await repo.findCommission(this.db, accountId, id)
    if (!c) throw errors.commissionNotFound()
    if (c.paidout) throw errors.commissionPaidOut()
    await repo.updateCommission(this.db, accountId, id, { approved: 0, rejected: 1, rejection_reason: reason })
  }

  /** Pays out every approved, unpaid commission in one bank transfer; null when there is nothing to pay. */
  async payOut(accountId: number, reference: string, invoiceNr: string | null = null): Promise<number | null> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.db.transaction().execute(async (trx) => {
          const due = await repo.payableCommissions(trx, accountId)
          if (due.length === 0) return null
          const { id } = await repo.insertPayment(trx, {
            account_id: accountId,
            date: iso(this.clock.now()),
            amount_cents: due.reduce((s, c) => s + c.commission_amount_cents, 0),
            method: 'bank_transfer',
            reference,
            status: 'paid',
            invoice_nr: invoiceNr,
          })
          // Only commissions still unpaid are claimed: a concurrent payout that got there first makes this one start over.
          const claimed = await repo.claimForPayment(
            trx,
            accountId,
            due.map((c) => c.id),
            id,
          )
          if (claimed !== due.length) throw new PayoutRaced()
          return id
        })
      } catch (err) {
        if (err instanceof PayoutRaced && attempt < 3) continue
        throw err
      }
    }
  }
}

class PayoutRaced extends Error {}

function paymentRow(p: AffiliatePayment) {
  return {
    id: p.id,
    date: time(p.date),
    amount: amount(p.amount_cents),
    method: p.method,
    reference: p.reference,
    status: p.status,
    invoice_nr: p.invoice_nr,
  }
}
