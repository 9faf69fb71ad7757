/** The roles a contact profile can have on a domain. */
export const ROLES = ['owner', 'admin', 'tech', 'billing'] as const
/** One of ROLES. */
export type Role = (typeof ROLES)[number]

/** The fields of a contact profile, as the API takes and shows them. */
export interface ContactFields {
  company_name?: string
  vat?: string
  firstname: string
  lastname: string
  street: string
  street_number: string
  street_suffix?: string
  zipcode: string
  city: string
  state?: string
  country: string
  email: string
  phone_country: string
  phone_area: string
  phone_number: string
  birth_date?: string
  defaults: Record<Role, boolean>
}

/** Whether a contact profile is in use by a domain (the domains area answers it). */
export interface ContactUse {
  usesContact(accountId: number, contactId: number): Promise<boolean>
}
