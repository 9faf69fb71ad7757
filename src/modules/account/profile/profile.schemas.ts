import { Type, type Static } from 'typebox'
import { Envelope } from '../../../http/schemas.js'
import type { ProfileInput } from './profile.service.js'

const Email = Type.String({ format: 'email', maxLength: 254 })
const Text = (max: number, description?: string) =>
  Type.String({ minLength: 1, maxLength: max, ...(description ? { description } : {}) })

/** The profile the OpenAPI document shows; the demo account lives at the same address. */
export const profileExample = {
  firstname: 'Jan',
  lastname: 'Jansen',
  company: 'Jansen Hosting B.V.',
  address: 'Stationsstraat',
  house_number: '12a',
  zipcode: '1234 AB',
  city: 'Amsterdam',
  country_code: 'NL',
  phone: '201234567',
  phone_country_code: '+31',
  email: 'jan@example.nl',
  email_invoices: 'facturen@example.nl',
  company_vat_number: 'NL123456789B01',
  pending_email: null,
  account_type: 'business',
}

/** The answer of `GET` and `PUT /account/profile/`. */
export const Profile = Envelope(
  Type.Object({
    firstname: Type.String(),
    lastname: Type.String(),
    company: Type.String({ description: 'Read-only' }),
    address: Type.String({ description: 'Street' }),
    house_number: Type.String(),
    zipcode: Type.String(),
    city: Type.String(),
    country_code: Type.String({ description: 'ISO 3166-1 alpha-2' }),
    phone: Type.String({ description: 'The national number in digits, without the leading `0` (`612345678`)' }),
    phone_country_code: Type.String({ description: 'The country calling code with `+` (`+31`)' }),
    email: Type.String(),
    email_invoices: Type.String({ description: 'Where invoices go; empty = `email`' }),
    company_vat_number: Type.String(),
    pending_email: Type.Union([Type.String(), Type.Null()], { description: 'A new address waiting for verification' }),
    account_type: Type.Union([Type.Literal('business'), Type.Literal('private')], {
      description:
        "Read-only: `private` when the company name is empty or the holder's own name and there is no VAT number, " +
        'else `business`',
    }),
  }),
  profileExample,
)

/** The body of `PUT /account/profile/`. */
export const UpdateProfileBody = Type.Object(
  {
    firstname: Text(64),
    lastname: Text(64),
    company: Type.Optional(Type.String({ maxLength: 128, description: 'Read-only: accepted only when unchanged' })),
    address: Text(128),
    house_number: Type.String({ minLength: 1, maxLength: 16 }),
    zipcode: Type.String({ minLength: 2, maxLength: 16, pattern: '^[A-Za-z0-9][A-Za-z0-9 -]*$' }),
    city: Text(64),
    country_code: Type.String({ pattern: '^[A-Za-z]{2}$', description: 'ISO 3166-1 alpha-2' }),
    phone: Type.String({
      minLength: 4,
      maxLength: 20,
      pattern: '^\\+?[0-9][0-9 ().-]*$',
      description:
        'National (`06 1234 5678`, `612345678`) or international (`+31612345678`, `0031612345678`); ' +
        'stored as the national number in digits without the leading `0`',
      examples: ['612345678', '+31612345678'],
    }),
    phone_country_code: Type.Optional(
      Type.String({
        pattern: '^\\+?[1-9][0-9]{0,3}$',
        description:
          'The country calling code, `+31` or `31`, stored as `+31`; optional when `phone` is international, ' +
          'and then it must match',
        examples: ['+31', '31'],
      }),
    ),
    email: Email,
    email_invoices: Type.Optional(Type.Union([Email, Type.Literal('')])),
    company_vat_number: Type.Optional(Type.String({ maxLength: 20, pattern: '^$|^[A-Za-z]{2}[0-9A-Za-z+*. ]{2,16}$' })),
  },
  {
    additionalProperties: false,
    description:
      'A full replace of the profile, except `email_invoices` and `company_vat_number`, which keep their value when omitted. A new `email` is kept pending until confirmed. ' +
      '`phone` and `phone_country_code` are stored in one form: `+31` and `612345678`.',
    examples: [{ ...profileExample, pending_email: undefined, account_type: undefined }],
  },
)

// The service's input type and this schema describe the same body: each must be assignable to the other.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
export const profileInputInStep: Same<Static<typeof UpdateProfileBody>, ProfileInput> = true

/** The body of `POST /account/profile/confirm-email`. */
export const ConfirmEmailBody = Type.Object(
  { token: Type.String({ minLength: 10, maxLength: 100 }) },
  { additionalProperties: false },
)
