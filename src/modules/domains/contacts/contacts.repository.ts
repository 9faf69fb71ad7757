import { compiledOnce } from '../../../db/compiled.js'
import type { Db } from '../../../db/database.js'
import { jsonColumns } from '../../../db/json-columns.js'
import type { ContactFields } from './contacts.types.js'

/** Contact profiles. Every function takes the account id; reads answer decoded rows. */

/** Decodes the profile of (part of) a contact profile row. */
export const decodeContact = jsonColumns<{ profile: ContactFields }>('profile')

/** The account's contact profiles, oldest first. */
export const listContacts = async (db: Db, accountId: number) =>
  (await contactsOf(db, undefined, [accountId])).map(decodeContact)

const contactsOf = compiledOnce((db: Db, _shape: undefined, [accountId]: [number]) =>
  db.selectFrom('contact_profiles').selectAll().where('account_id', '=', accountId).orderBy('id'),
)

/** One contact profile of the account. */
export const findContact = async (db: Db, accountId: number, id: number) => {
  const row = await db
    .selectFrom('contact_profiles')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst()
  return row && decodeContact(row)
}

/** Stores a new contact profile. */
export const insertContact = (db: Db, row: { account_id: number; name: string; profile: string; created_at: string }) =>
  db
    .insertInto('contact_profiles')
    .values({ ...row, updated_at: row.created_at })
    .returning('id')
    .executeTakeFirstOrThrow()

/** Changes a contact profile of the account. */
export const updateContact = (
  db: Db,
  accountId: number,
  id: number,
  changes: { name?: string; profile?: string; updated_at: string },
) => db.updateTable('contact_profiles').set(changes).where('account_id', '=', accountId).where('id', '=', id).execute()

/** Deletes a contact profile of the account. */
export const deleteContact = (db: Db, accountId: number, id: number) =>
  db.deleteFrom('contact_profiles').where('account_id', '=', accountId).where('id', '=', id).execute()
