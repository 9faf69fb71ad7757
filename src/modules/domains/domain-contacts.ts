import type { Kysely } from 'kysely'
import type { DB } from '../../db/tables.js'
import type { ContactUse } from './contacts/contacts.types.js'
import * as repo from './domains.repository.js'

/**
 * The domains area's answer to the contacts' port: whether one of the account's domains has a contact profile in any
 * role. A read of the domains' own rows, built before the contacts service (which the domains service uses).
 */
export function domainContactUse(db: Kysely<DB>): ContactUse {
  return {
    async usesContact(accountId, contactId) {
      const domains = await repo.contactsOfDomains(db, accountId)
      return domains.some((d) => Object.values(d.contacts).includes(contactId))
    },
  }
}
