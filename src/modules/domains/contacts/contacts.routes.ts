import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { DryRunQuery, dry } from '../../../http/dry-run.js'
import { Envelope, OkMessage, ok, okMessage } from '../../../http/schemas.js'
import { Contact, ContactBody, ContactIdParams, ContactList, contactExample } from './contacts.schemas.js'
import { errorsFor } from '../../../http/error-responses.js'
import { errors } from '../../../errors.js'

/** Contact profiles: the owner, admin, tech and billing contacts of domains. */
export const contactsRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const tags = ['Contact profiles']

  app.get(
    '/domains/contacts',
    {
      config: { area: 'domains-profiles' },
      schema: {
        operationId: 'listContactProfiles',
        tags,
        summary: 'List contact profiles',
        response: { 200: Envelope(ContactList, { contacts: [contactExample] }) },
      },
    },
    async (req) => ok({ contacts: await app.services.contacts.list(req.caller.accountId) }),
  )

  app.post(
    '/domains/contacts',
    {
      config: { area: 'domains-profiles' },
      schema: {
        operationId: 'createContactProfile',
        tags,
        summary: 'Create a contact profile',
        description:
          'Required in `profile`: firstname, lastname, street, street_number, zipcode, city, country, email, phone_country, phone_area, phone_number. ' +
          'Making it the default for a role takes that role from the profile that had it. `?test=1` answers `id` 0 without storing the profile.',
        querystring: DryRunQuery,
        body: ContactBody,
        response: { 200: Envelope(Contact, contactExample) },
      },
    },
    async (req) => ok(await app.services.contacts.create(req.caller.accountId, req.body, dry(req))),
  )

  app.get(
    '/domains/contacts/:id',
    {
      config: { area: 'domains-profiles', fixture: 'contact' },
      schema: {
        operationId: 'getContactProfile',
        tags,
        summary: 'Get a contact profile',
        params: ContactIdParams,
        response: {
          200: Envelope(Contact, contactExample),
          ...errorsFor('domains-profiles', { 404: [errors.contactNotFound()] }),
        },
      },
    },
    async (req) => ok(await app.services.contacts.get(req.caller.accountId, req.params.id)),
  )

  app.put(
    '/domains/contacts/:id',
    {
      config: { area: 'domains-profiles', fixture: 'contact' },
      schema: {
        operationId: 'updateContactProfile',
        tags,
        summary: 'Update a contact profile',
        description: 'Changes the fields given; the others stay.',
        params: ContactIdParams,
        querystring: DryRunQuery,
        body: ContactBody,
        response: {
          200: Envelope(Contact, contactExample),
          ...errorsFor('domains-profiles', { 404: [errors.contactNotFound()] }),
        },
      },
    },
    async (req) => ok(await app.services.contacts.update(req.caller.accountId, req.params.id, req.body, dry(req))),
  )

  app.delete(
    '/domains/contacts/:id',
    {
      config: { area: 'domains-profiles', fixture: 'contact' },
      schema: {
        operationId: 'deleteContactProfile',
        tags,
        summary: 'Delete a contact profile',
        description: 'A profile that a domain uses cannot be deleted (400).',
        params: ContactIdParams,
        querystring: DryRunQuery,
        response: { 200: OkMessage, ...errorsFor('domains-profiles', { 404: [errors.contactNotFound()] }) },
      },
    },
    async (req) => {
      await app.services.contacts.delete(req.caller.accountId, req.params.id, dry(req))
      return okMessage('Contact profile deleted')
    },
  )
}
