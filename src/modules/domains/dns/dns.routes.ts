import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { DryRunQuery, dry } from '../../../http/dry-run.js'
import { Envelope, OkMessage, ok, okMessage } from '../../../http/schemas.js'
import { okJson, sendJson } from '../../../http/json-reply.js'
import { DomainParams } from '../domains.schemas.js'
import {
  DeleteRecordBody,
  DnsRecords,
  ImportZoneBody,
  PatchRecordBody,
  ReplaceRecordsBody,
  ZoneFile,
} from './dns.schemas.js'

/** The success text of every DNS change. */
export const DNS_UPDATED = 'DNS successfully updated'

const noAccess = 'A domain that is not in the account answers 400 `You have no access to this resource`.'

const recordsExample = {
  domain: 'example.nl',
  records: [
    { type: 'A', name: 'example.nl.', value: '203.0.113.10', ttl: 3600 },
    { type: 'MX', name: 'example.nl.', value: '10 mail.example.nl.', ttl: 3600 },
    { type: 'TXT', name: '_acme-challenge.example.nl.', value: 'gfj9Xq...Rg85nM', ttl: 120 },
  ],
}

/** The DNS records of a domain: read, replaced, added to and removed one by one. */
export const dnsRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.get(
    '/domains/:domain/dns',
    {
      config: { area: 'domains', fixture: 'domain', cache: true },
      schema: {
        operationId: 'getDnsRecords',
        tags: ['DNS'],
        summary: 'Get the DNS records of a domain',
        description: `Names are FQDN with the trailing dot; \`records\` is the last key of \`data\`. ${noAccess}`,
        params: DomainParams,
        response: { 200: Envelope(DnsRecords, recordsExample) },
      },
    },
    async (req, reply) =>
      sendJson(reply, okJson(await app.services.dns.getJson(req.caller.accountId, req.params.domain))),
  )

  app.put(
    '/domains/:domain/dns',
    {
      config: { area: 'domains', fixture: 'domainRecords' },
      schema: {
        operationId: 'replaceDnsRecords',
        tags: ['DNS'],
        summary: 'Replace all DNS records of a domain',
        description:
          'The whole zone becomes `records`, atomically: one invalid record and nothing changes (400 naming the record). ' +
          'Several records with the same type and name are allowed. ' +
          noAccess,
        params: DomainParams,
        querystring: DryRunQuery,
        body: ReplaceRecordsBody,
        response: { 200: OkMessage },
      },
    },
    async (req) => {
      await app.services.dns.replace(req.caller.accountId, req.params.domain, req.body.records, dry(req))
      return okMessage(DNS_UPDATED)
    },
  )

  app.patch(
    '/domains/:domain/dns',
    {
      config: { area: 'domains', fixture: 'domainRecord' },
      schema: {
        operationId: 'updateDnsRecord',
        tags: ['DNS'],
        summary: 'Create or replace one DNS record set',
        description:
          'The records with this type and name are replaced by this one record (created when there were none). ' +
          '`"value": null` deletes the record set. ' +
          noAccess,
        params: DomainParams,
        querystring: DryRunQuery,
        body: PatchRecordBody,
        response: { 200: OkMessage },
      },
    },
    async (req) => {
      await app.services.dns.patch(req.caller.accountId, req.params.domain, req.body.record, dry(req))
      return okMessage(DNS_UPDATED)
    },
  )

  app.delete(
    '/domains/:domain/dns',
    {
      config: { area: 'domains', fixture: 'domainRecord' },
      schema: {
        operationId: 'deleteDnsRecord',
        tags: ['DNS'],
        summary: 'Delete DNS records',
        description:
          'Deletes the records with this type, name and value (every value of the set when `value` is omitted). ' +
          'Nothing matching is still a success. ' +
          noAccess,
        params: DomainParams,
        querystring: DryRunQuery,
        body: DeleteRecordBody,
        response: { 200: OkMessage },
      },
    },
    async (req) => {
      await app.services.dns.remove(req.caller.accountId, req.params.domain, req.body.record, dry(req))
      return okMessage(DNS_UPDATED)
    },
  )
}

/** The zone file of a domain: exported as BIND text, and imported in place of every record. */
export const zoneFileRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.get(
    '/domains/:domain/dns/zone',
    {
      config: { area: 'domains', fixture: 'domain', cache: true },
      schema: {
        operationId: 'getDnsZoneFile',
        tags: ['DNS'],
        summary: 'Get the zone file of a domain',
        description: `The zone as BIND text, SOA and apex NS included. ${noAccess}`,
        params: DomainParams,
        response: {
          200: Envelope(ZoneFile, {
            zone: '$ORIGIN example.nl.\n$TTL 3600\n@ 3600 IN SOA ns1.hostapi.test. hostmaster.example.nl. (...)\n',
          }),
        },
      },
    },
    async (req) => ok({ zone: await app.services.dns.zoneFile(req.caller.accountId, req.params.domain) }),
  )

  // The JSON body of a zone import may hold the largest zone text plus its escaping (1 MiB of headroom); the
  // text itself is measured in the service (413 `Zone file too large`).
  const zones = app.ctx.config.zones
  app.put(
    '/domains/:domain/dns/zone',
    {
      bodyLimit: Math.max(app.ctx.config.bodyLimit, zones.maxBytes + 1024 * 1024),
      config: { area: 'domains', fixture: 'domainZone' },
      schema: {
        operationId: 'importDnsZoneFile',
        tags: ['DNS'],
        summary: 'Import a zone file',
        description:
          'Replaces every record with those of the BIND text; its SOA and apex NS records are ignored. ' +
          '`$ORIGIN`, `$TTL`, relative names, `@`, parentheses and comments are understood; a bad line answers 400 naming the line. ' +
          "Zone texts up to 10 MiB and 50,000 records by default (the server's settings may differ): larger answers 413, more records 400. " +
          'A large import is parsed in a worker thread; when too many are waiting the answer is 503 with Retry-After. ' +
          noAccess,
        params: DomainParams,
        querystring: DryRunQuery,
        body: ImportZoneBody,
        response: { 200: OkMessage },
      },
    },
    async (req) => {
      await app.services.dns.importZone(req.caller.accountId, req.params.domain, req.body.zone, dry(req))
      return okMessage(DNS_UPDATED)
    },
  )
}
