import { sql, type Insertable, type Updateable } from 'kysely'
import type { Db } from '../../db/database.js'
import { likeContains } from '../../db/search.js'
import { jsonColumns, type Decoded } from '../../db/json-columns.js'
import type { Challenge } from '../../drivers/ca/ca.js'
import type {
  CertificateProductRow,
  CertificateRow,
  CertificatesTable,
  CertificateStatus,
} from './certificates.tables.js'

/** The JSON columns of a certificate product row, decoded. */
export interface CertificateProductJson {
  durations: number[]
}

/** The JSON columns of a certificate row, decoded. */
export interface CertificateJson {
  domains: string[]
  challenge: Challenge | null
  dns_auto_setup: string[]
}

/** A certificate product with its durations decoded. */
export type CertificateProduct = Decoded<CertificateProductRow, CertificateProductJson>
/** A certificate package with its JSON columns decoded. */
export type Certificate = Decoded<CertificateRow, CertificateJson>
/** A certificate with its product's name. */
export type CertificateWithProduct = Certificate & { product_name: string }

/** Decodes the durations of (part of) a certificate product row. */
export const decodeProduct = jsonColumns<CertificateProductJson>('durations')
/** Decodes the JSON columns of (part of) a certificate row. */
export const decodeCertificate = jsonColumns<CertificateJson>('domains', 'challenge', 'dns_auto_setup')

/** Products that can be ordered, by id. */
export const listActiveProducts = async (db: Db): Promise<CertificateProduct[]> =>
  (await db.selectFrom('certificate_products').selectAll().where('active', '=', 1).orderBy('id').execute()).map(
    decodeProduct,
  )

/** One product, active or not. */
export const findProduct = async (db: Db, id: number): Promise<CertificateProduct | undefined> => {
  const row = await db.selectFrom('certificate_products').selectAll().where('id', '=', id).executeTakeFirst()
  return row && decodeProduct(row)
}

const withProduct = (db: Db) =>
  db
    .selectFrom('certificates')
    .innerJoin('certificate_products', 'certificate_products.id', 'certificates.product_id')
    .selectAll('certificates')
    .select('certificate_products.name as product_name')

/** One certificate of the account. */
export const findOwned = async (db: Db, accountId: number, id: number): Promise<CertificateWithProduct | undefined> => {
  const row = await withProduct(db)
    .where('certificates.account_id', '=', accountId)
    .where('certificates.id', '=', id)
    .executeTakeFirst()
  return row && decodeCertificate(row)
}

/** The account's newest certificate (in `status`, when given). */
export const latestOwned = (db: Db, accountId: number, status?: CertificateStatus) => {
  let q = db
    .selectFrom('certificates')
    .select(['id', 'common_name', 'status', 'valid_until'])
    .where('account_id', '=', accountId)
  if (status) q = q.where('status', '=', status)
  return q.orderBy('id', 'desc').limit(1).executeTakeFirst()
}

/** The package an order item created, if it exists already (a processing job that ran twice). */
export const findByOrderItem = async (
  db: Db,
  accountId: number,
  orderItemId: number,
): Promise<Certificate | undefined> => {
  const row = await db
    .selectFrom('certificates')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('order_item_id', '=', orderItemId)
    .executeTakeFirst()
  return row && decodeCertificate(row)
}

/** A page of the account's certificates, newest first; `search` matches the names or the product, case-insensitively. */
export async function listOwned(
  db: Db,
  accountId: number,
  opts: { search?: string; limit: number; offset: number },
): Promise<{ rows: CertificateWithProduct[]; total: number }> {
  let q = withProduct(db).where('certificates.account_id', '=', accountId)
  if (opts.search) {
    const search = opts.search
    q = q.where((eb) =>
      eb.or([
        likeContains(sql`lower(certificates.domains)`, search),
        likeContains(sql`lower(certificate_products.name)`, search),
      ]),
    )
  }
  const { total } = await q
    .clearSelect()
    .select((eb) => eb.fn.countAll<number>().as('total'))
    .executeTakeFirstOrThrow()
  const rows = await q.orderBy('certificates.id', 'desc').limit(opts.limit).offset(opts.offset).execute()
  return { rows: rows.map(decodeCertificate), total: Number(total) }
}

/** Stores a new package and returns its id. */
export const insertCertificate = async (db: Db, row: Insertable<CertificatesTable>): Promise<number> =>
  (await db.insertInto('certificates').values(row).returning('id').executeTakeFirstOrThrow()).id

/**
 * Updates a certificate of the account only while its status is one of `from`; returns whether it did,
 * so two requests (or two jobs) racing on one certificate cannot both win.
 */
export async function updateIfStatus(
  db: Db,
  accountId: number,
  id: number,
  from: CertificateStatus[],
  changes: Updateable<CertificatesTable>,
): Promise<boolean> {
  const result = await db
    .updateTable('certificates')
    .set(changes)
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .where('status', 'in', from)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

/** An issued certificate whose leaf the renewal job replaces, with what its request stored. */
export type RenewableCertificate = Pick<
  CertificateRow,
  'id' | 'account_id' | 'csr' | 'validation_method' | 'approver_email' | 'auto_setup_dns' | 'valid_until'
>

/**
 * Issued certificates of every account (the renewal job's scan) whose leaf ends before `before` while their paid
 * term ends later, requested with a method that can be repeated without the customer; soonest first.
 */
export const listRenewable = (db: Db, before: string, limit: number): Promise<RenewableCertificate[]> =>
  db
    .selectFrom('certificates')
    .select(['id', 'account_id', 'csr', 'validation_method', 'approver_email', 'auto_setup_dns', 'valid_until'])
    .where('status', '=', 'ACT')
    .where('csr', 'is not', null)
    .where('validation_method', 'in', ['dns', 'http', 'https'])
    .where('valid_until', '<', before)
    .where((eb) => eb('ends_at', '>', eb.ref('valid_until')))
    .orderBy('valid_until')
    .limit(limit)
    .execute()
