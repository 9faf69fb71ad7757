import type { AnyDb } from './helpers.js'

export const kind = 'expand'

/**
 * The built-in registry remembers the request that registered or transferred a name, so the same request asked
 * again (its answer was lost: the process died before it recorded the domain) gets the registration it made, not
 * "not available" (EPP's client transaction id does this at a real registry).
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema.alterTable('registry_domains').addColumn('request_id', 'text').execute()
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.alterTable('registry_domains').dropColumn('request_id').execute()
}
