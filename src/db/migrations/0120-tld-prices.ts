import type { AnyDb } from './helpers.js'
import { withId } from './helpers.js'

export const kind = 'expand'

// extension, register, renew, transfer (EUR cents, excluding VAT), max period (years), dnssec, privacy, auth code.
const TLDS: [string, number, number, number, number, number, number, number][] = [
  ['nl', 799, 799, 0, 1, 1, 0, 1],
  ['com', 999, 1299, 999, 10, 1, 1, 1],
  ['net', 1199, 1499, 1199, 10, 1, 1, 1],
  ['org', 1099, 1399, 1099, 10, 1, 1, 1],
  ['eu', 699, 699, 0, 1, 1, 0, 1],
  ['be', 699, 699, 0, 1, 1, 0, 1],
  ['de', 699, 699, 0, 1, 1, 0, 1],
  ['fr', 999, 999, 0, 1, 1, 0, 1],
  ['info', 299, 1999, 1599, 10, 1, 1, 1],
  ['io', 3999, 3999, 3999, 10, 1, 1, 1],
  ['dev', 1499, 1499, 1499, 10, 1, 1, 1],
  ['app', 1599, 1599, 1599, 10, 1, 1, 1],
  ['online', 299, 2999, 2999, 10, 1, 1, 1],
  ['shop', 499, 2999, 2999, 10, 1, 1, 1],
  ['tech', 999, 3999, 3999, 10, 1, 1, 1],
  ['xyz', 199, 1299, 1299, 10, 1, 1, 1],
  ['co.uk', 899, 899, 0, 10, 1, 0, 0],
  ['uk', 899, 899, 0, 10, 1, 0, 0],
  ['amsterdam', 3499, 3499, 3499, 10, 1, 0, 1],
  ['frl', 2499, 2499, 2499, 10, 1, 0, 1],
  ['cloud', 999, 1999, 1999, 10, 1, 1, 1],
  ['site', 299, 2499, 2499, 10, 1, 1, 1],
]

// Premium names of the built-in registry: name, register, renew (EUR cents, excluding VAT).
const PREMIUM: [string, number, number][] = [
  ['cloud.shop', 250000, 2999],
  ['hosting.online', 125000, 2999],
  ['premium.xyz', 49900, 49900],
  ['ai.dev', 1500000, 1499],
]

export async function up(db: AnyDb): Promise<void> {
  await withId(db, db.schema.createTable('tld_prices'))
    .addColumn('extension', 'text', (c) => c.notNull().unique())
    .addColumn('register_cents', 'integer', (c) => c.notNull())
    .addColumn('renew_cents', 'integer', (c) => c.notNull())
    .addColumn('transfer_cents', 'integer', (c) => c.notNull())
    .addColumn('min_period', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('max_period', 'integer', (c) => c.notNull().defaultTo(10))
    .addColumn('supports_dnssec', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('supports_privacy', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('requires_auth_code', 'integer', (c) => c.notNull().defaultTo(1))
    .execute()
  await db
    .insertInto('tld_prices')
    .values(
      TLDS.map(([extension, reg, renew, transfer, max, dnssec, privacy, auth]) => ({
        extension,
        register_cents: reg,
        renew_cents: renew,
        transfer_cents: transfer,
        min_period: 1,
        max_period: max,
        supports_dnssec: dnssec,
        supports_privacy: privacy,
        requires_auth_code: auth,
      })),
    )
    .execute()

  await withId(db, db.schema.createTable('premium_names'))
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('register_cents', 'integer', (c) => c.notNull())
    .addColumn('renew_cents', 'integer', (c) => c.notNull())
    .execute()
  await db
    .insertInto('premium_names')
    .values(PREMIUM.map(([name, reg, renew]) => ({ name, register_cents: reg, renew_cents: renew })))
    .execute()
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('premium_names').execute()
  await db.schema.dropTable('tld_prices').execute()
}
