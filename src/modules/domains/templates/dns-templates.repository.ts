import type { Db } from '../../../db/database.js'
import { jsonColumns } from '../../../db/json-columns.js'
import type { TemplateRecord } from './dns-templates.types.js'

/** DNS templates. Every function takes the account id; reads answer decoded rows. */

/** Decodes the records of (part of) a DNS template row. */
export const decodeTemplate = jsonColumns<{ records: TemplateRecord[] }>('records')

/** The account's DNS templates, oldest first. */
export const listTemplates = async (db: Db, accountId: number) =>
  (await db.selectFrom('dns_templates').selectAll().where('account_id', '=', accountId).orderBy('id').execute()).map(
    decodeTemplate,
  )

/** One DNS template of the account. */
export const findTemplate = async (db: Db, accountId: number, id: number) => {
  const row = await db
    .selectFrom('dns_templates')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst()
  return row && decodeTemplate(row)
}

/** Stores a new DNS template. */
export const insertTemplate = (
  db: Db,
  row: { account_id: number; alias: string; is_default: number; records: string; created_at: string },
) =>
  db
    .insertInto('dns_templates')
    .values({ ...row, updated_at: row.created_at })
    .returning('id')
    .executeTakeFirstOrThrow()

/** Changes a DNS template of the account. */
export const updateTemplate = (
  db: Db,
  accountId: number,
  id: number,
  changes: { alias?: string; is_default?: number; records?: string; updated_at: string },
) => db.updateTable('dns_templates').set(changes).where('account_id', '=', accountId).where('id', '=', id).execute()

/** Unmarks the account's default template. */
export const clearDefault = (db: Db, accountId: number) =>
  db.updateTable('dns_templates').set({ is_default: 0 }).where('account_id', '=', accountId).execute()

/** Deletes a DNS template of the account. */
export const deleteTemplate = (db: Db, accountId: number, id: number) =>
  db.deleteFrom('dns_templates').where('account_id', '=', accountId).where('id', '=', id).execute()
