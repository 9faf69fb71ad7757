import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { DryRunQuery, dry } from '../../http/dry-run.js'
import { Envelope, OkMessage, ok, okMessage } from '../../http/schemas.js'
import { okJson, sendJson } from '../../http/json-reply.js'
import {
  AuthCode,
  CancelResult,
  DomainDetail,
  DomainList,
  DomainParams,
  ListDomainsQuery,
  UpdateDomainBody,
} from './domains.schemas.js'

const detailExample = {
  id: 1,
  domain: 'example.nl',
  renewal_date: '2027-03-01',
  status: 'active',
  status_id: 1,
  cancellation_date: null,
  tags: ['web'],
  nameserver_profile: 'default-mijnhost',
  nameservers: ['ns1.hostapi.test', 'ns2.hostapi.test'],
  nameserver_details: [
    { hostname: 'ns1.hostapi.test', ipv4: '', ipv6: '' },
    { hostname: 'ns2.hostapi.test', ipv4: '', ipv6: '' },
  ],
  dnssec_enabled: 0,
  dnssec_keys: [],
  forwarder: null,
  forwarder_enabled: false,
  forwarder_blocked_by_hosting: false,
  is_lockable: true,
  is_locked: true,
  managed_dns: true,
  whitelabel_ns: false,
  handles: {
    owner: { handle_id: 12, name: 'Jan Jansen', type: 'person' },
    admin: null,
    tech: null,
    reseller: null,
    billing: null,
  },
  messages: [],
}

const noAccess =
  'A domain that is not in the account answers 400 `You have no access to this resource`; a malformed name 400 `Invalid domain name`.'

/** Domains: the list, one domain's details and its settings. */
export const domainsRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.get(
    '/domains',
    {
      config: { area: 'domains', cache: true },
      schema: {
        operationId: 'listDomains',
        tags: ['Domains'],
        summary: 'List domains',
        description:
          'All domains of the account, ordered by id. `tags` keeps domains with any of the tags. Without `page` and `limit` ' +
          'every domain is returned; with either, one page and `pagination`.',
        querystring: ListDomainsQuery,
        response: {
          200: Envelope(DomainList, {
            domains: [
              {
                id: 1,
                domain: 'example.nl',
                renewal_date: '2027-03-01',
                status: 'active',
                status_id: 1,
                tags: ['web'],
              },
            ],
          }),
        },
      },
    },
    async (req, reply) => sendJson(reply, okJson(await app.services.domains.list(req.caller.accountId, req.query))),
  )

  app.get(
    '/domains/:domain',
    {
      config: { area: 'domains', fixture: 'domain', cache: true },
      schema: {
        operationId: 'getDomain',
        tags: ['Domains'],
        summary: 'Get a domain',
        description: noAccess,
        params: DomainParams,
        response: { 200: Envelope(DomainDetail, detailExample) },
      },
    },
    async (req) => ok(await app.services.domains.detail(req.caller.accountId, req.params.domain)),
  )

  app.put(
    '/domains/:domain',
    {
      config: { area: 'domains', fixture: 'domainUpdate' },
      schema: {
        operationId: 'updateDomain',
        tags: ['Domains'],
        summary: 'Update a domain',
        description:
          'Changes the fields given: `nameserver` (a profile alias) or `nameservers`, `is_locked`, `dnssec`, `profile` ' +
          '(contact profile ids), `forwarder`, `tags`. Returns the domain. ' +
          noAccess,
        params: DomainParams,
        querystring: DryRunQuery,
        body: UpdateDomainBody,
        response: { 200: Envelope(DomainDetail, detailExample) },
      },
    },
    async (req) => ok(await app.services.domains.update(req.caller.accountId, req.params.domain, req.body, dry(req))),
  )
}

/** Leaving: a domain's cancellation, its withdrawal and the auth code for a transfer away. */
export const domainExitRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.delete(
    '/domains/:domain',
    {
      config: { area: 'domains', fixture: 'domain' },
      schema: {
        operationId: 'cancelDomain',
        tags: ['Domains'],
        summary: 'Cancel a domain',
        description:
          'The domain stays active until its renewal date and ends then; until that day the cancellation can be withdrawn. ' +
          noAccess,
        params: DomainParams,
        querystring: DryRunQuery,
        response: { 200: Envelope(CancelResult, { cancellation_date: '2027-03-01' }) },
      },
    },
    async (req) => {
      const { cancellationDate } = await app.services.domains.cancel(req.caller.accountId, req.params.domain, dry(req))
      return ok({ cancellation_date: cancellationDate }, 'Domain cancellation scheduled')
    },
  )

  app.put(
    '/domains/:domain/cancel-delete',
    {
      config: { area: 'domains', fixture: 'domain' },
      schema: {
        operationId: 'cancelDomainDeletion',
        tags: ['Domains'],
        summary: 'Withdraw a pending cancellation',
        description: `Answers 400 when no cancellation is pending. ${noAccess}`,
        params: DomainParams,
        querystring: DryRunQuery,
        response: { 200: OkMessage },
      },
    },
    async (req) => {
      await app.services.domains.cancelDelete(req.caller.accountId, req.params.domain, dry(req))
      return okMessage('Domain cancellation withdrawn')
    },
  )

  app.get(
    '/domains/:domain/auth-code',
    {
      config: { area: 'domains', fixture: 'domain' },
      schema: {
        operationId: 'getDomainAuthCode',
        tags: ['Domains'],
        summary: 'Get the auth code of a domain',
        description:
          'The transfer (EPP) code. A locked domain gives none out: unlock it first (`PUT /domains/{domain}` with `is_locked: false`). ' +
          noAccess,
        params: DomainParams,
        response: { 200: Envelope(AuthCode, { auth_code: 'Xq7#mK2pLw9$aB4z' }) },
      },
    },
    async (req) => ok({ auth_code: await app.services.domains.authCode(req.caller.accountId, req.params.domain) }),
  )
}
