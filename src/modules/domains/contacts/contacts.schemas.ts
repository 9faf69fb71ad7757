import { Type } from 'typebox'

/** Schemas of the contact profile routes. */

/** The `{id}` of a contact profile route. */
export const ContactIdParams = Type.Object({ id: Type.Integer({ minimum: 1, description: 'Contact profile id' }) })

const Defaults = Type.Object(
  {
    owner: Type.Boolean(),
    admin: Type.Boolean(),
    tech: Type.Boolean(),
    billing: Type.Boolean(),
  },
  { description: 'The roles this profile is the default for on new domains' },
)

const fields = {
  company_name: Type.String({ maxLength: 255 }),
  vat: Type.String({ maxLength: 32 }),
  firstname: Type.String({ minLength: 1, maxLength: 100 }),
  lastname: Type.String({ minLength: 1, maxLength: 100 }),
  street: Type.String({ minLength: 1, maxLength: 255 }),
  street_number: Type.String({ minLength: 1, maxLength: 16 }),
  street_suffix: Type.String({ maxLength: 16 }),
  zipcode: Type.String({ minLength: 1, maxLength: 16 }),
  city: Type.String({ minLength: 1, maxLength: 100 }),
  state: Type.String({ maxLength: 100 }),
  country: Type.String({ pattern: '^[A-Za-z]{2}$', description: 'ISO 3166-1 alpha-2' }),
  email: Type.String({ maxLength: 254, pattern: '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$' }),
  phone_country: Type.String({ pattern: '^\\+[0-9]{1,4}$', description: 'e.g. `+31`' }),
  phone_area: Type.String({ pattern: '^[0-9]{1,6}$' }),
  phone_number: Type.String({ pattern: '^[0-9]{3,15}$' }),
  birth_date: Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$', description: 'YYYY-MM-DD' }),
}

const o = Type.Optional

/** Create and update take the same body; on update every field is optional and the others stay. */
export const ContactBody = Type.Object({
  name: o(Type.String({ maxLength: 255, description: 'A label for the profile; default: first and last name' })),
  profile: o(
    Type.Object(
      {
        company_name: o(fields.company_name),
        vat: o(fields.vat),
        firstname: o(fields.firstname),
        lastname: o(fields.lastname),
        street: o(fields.street),
        street_number: o(fields.street_number),
        street_suffix: o(fields.street_suffix),
        zipcode: o(fields.zipcode),
        city: o(fields.city),
        state: o(fields.state),
        country: o(fields.country),
        email: o(fields.email),
        phone_country: o(fields.phone_country),
        phone_area: o(fields.phone_area),
        phone_number: o(fields.phone_number),
        birth_date: o(fields.birth_date),
        defaults: o(Type.Partial(Defaults)),
      },
      { additionalProperties: false },
    ),
  ),
})

/** A contact profile as the API shows it. */
export const Contact = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  profile: Type.Object({
    company_name: o(Type.String()),
    vat: o(Type.String()),
    firstname: Type.String(),
    lastname: Type.String(),
    street: Type.String(),
    street_number: Type.String(),
    street_suffix: o(Type.String()),
    zipcode: Type.String(),
    city: Type.String(),
    state: o(Type.String()),
    country: Type.String(),
    email: Type.String(),
    phone_country: Type.String(),
    phone_area: Type.String(),
    phone_number: Type.String(),
    birth_date: o(Type.String()),
    defaults: Defaults,
  }),
})

/** `GET /domains/contacts`. */
export const ContactList = Type.Object({ contacts: Type.Array(Contact) })

/** The example used in the OpenAPI document. */
export const contactExample = {
  id: 12,
  name: 'Jan Jansen',
  profile: {
    firstname: 'Jan',
    lastname: 'Jansen',
    street: 'Keizersgracht',
    street_number: '100',
    zipcode: '1015 AA',
    city: 'Amsterdam',
    country: 'NL',
    email: 'jan@example.nl',
    phone_country: '+31',
    phone_area: '20',
    phone_number: '1234567',
    defaults: { owner: true, admin: true, tech: false, billing: true },
  },
}
