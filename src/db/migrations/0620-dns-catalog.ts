import type { AnyDb } from './helpers.js'

export const kind = 'expand'

/**
 * The catalog zone (RFC 9432) of the built-in DNS server: the serial it is served with and a digest of the member
 * zones it was given for, so every instance serves one serial per set of zones and a new set raises it once.
 * One row (id 1), written by the first instance that sees the set change.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('dns_catalog')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('serial', 'bigint', (c) => c.notNull())
    .addColumn('members_digest', 'text', (c) => c.notNull())
    .execute()
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('dns_catalog').execute()
}
