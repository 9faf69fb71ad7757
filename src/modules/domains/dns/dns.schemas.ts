import { Type } from 'typebox'
import { Nullable } from '../../../lib/nullable.js'
import { RECORD_TYPES } from '../../../lib/dns/records.js'
import { documentedEnum } from '../../../http/schemas.js'

/** Schemas of the DNS record and zone file routes. */

const RecordOut = Type.Object({
  type: documentedEnum(Type.String({ examples: ['A'] }), RECORD_TYPES),
  name: Type.String({ description: 'FQDN with the trailing dot', examples: ['www.example.nl.'] }),
  value: Type.String({ examples: ['203.0.113.10'] }),
  ttl: Type.Integer({ examples: [3600] }),
})

/** `records` is the last key of `data`: acme.sh reads it with a regular expression. */
export const DnsRecords = Type.Object({
  domain: Type.String(),
  records: Type.Array(RecordOut),
})

/** A record type in a body: any case is accepted (`mx` is MX); an unknown one is refused with the record's text. */
export const RecordTypeIn = () =>
  documentedEnum(Type.String({ maxLength: 10, description: 'Case-insensitive' }), RECORD_TYPES)

const RecordIn = Type.Object({
  type: RecordTypeIn(),
  name: Type.Optional(
    Nullable(
      Type.String({
        maxLength: 255,
        description:
          '`@` or empty for the apex, a relative name (`www`), or a FQDN in the zone with or without the trailing dot',
      }),
    ),
  ),
  value: Type.String({ maxLength: 8192 }),
  ttl: Type.Optional(Nullable(Type.Integer({ description: '60–86400, default 3600' }))),
})

/** `PUT /domains/{domain}/dns`. */
export const ReplaceRecordsBody = Type.Object({
  records: Type.Array(RecordIn, { maxItems: 10000 }),
})

/** `PATCH /domains/{domain}/dns`. */
export const PatchRecordBody = Type.Object({
  record: Type.Object({
    type: RecordTypeIn(),
    name: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
    value: Type.Optional(Nullable(Type.String({ maxLength: 8192, description: '`null` deletes the record set' }))),
    ttl: Type.Optional(Nullable(Type.Integer())),
  }),
})

/** `DELETE /domains/{domain}/dns`. */
export const DeleteRecordBody = Type.Object({
  record: Type.Object({
    type: RecordTypeIn(),
    name: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
    value: Type.Optional(Nullable(Type.String({ maxLength: 8192, description: 'Omitted: every record of the set' }))),
    ttl: Type.Optional(Nullable(Type.Integer({ description: 'Ignored' }))),
  }),
})

/** `GET /domains/{domain}/dns/zone`. */
export const ZoneFile = Type.Object({ zone: Type.String({ description: 'BIND zone text' }) })

/** `PUT /domains/{domain}/dns/zone`. */
export const ImportZoneBody = Type.Object({
  zone: Type.String({ description: 'BIND zone text, at most HOSTAPI_ZONE_MAX_BYTES bytes (10 MiB by default)' }),
})
