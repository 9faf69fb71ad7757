import type { AnyDb } from './helpers.js'

export const kind = 'expand'

/**
 * The records of a zone in insertion order, by an index: a large zone is read a page at a time (`id` after the
 * last one read), and without it every page would scan and sort all of the zone's records.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema.createIndex('dns_records_domain_id_idx').on('dns_records').columns(['domain_id', 'id']).execute()
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropIndex('dns_records_domain_id_idx').execute()
}
