// One suite for the record-set rule of a PATCH, on both databases: generated cases (fast-check) run through the
// TypeScript rule (the statements of replaceRecordSetIn, on either database) and through the database path a PATCH
// takes (writeRecordSet: those statements on SQLite, the PL/pgSQL dns_replace_record_set on PostgreSQL), and both
// must give the outcome of the rule as written below: the answer, the records at the name, the serial, the audit row.
// On PostgreSQL also the call a PATCH makes with no read before it (writeRecordSetAt, dns_replace_record_set_at).
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { makeDomain } from './helpers/fixtures/domains.js'
import type { NormalisedRecord } from '../src/lib/dns/records.js'
import { type PendingAudit, withRequestAudit } from '../src/db/request-audit.js'
import * as repo from '../src/modules/domains/dns/dns.repository.js'
import { writeRecordSet, writeRecordSetAt } from '../src/modules/domains/dns/zone-store.js'

const TYPES = ['A', 'AAAA', 'CNAME', 'MX', 'TXT'] as const
const NAME = (zone: string) => `rs.${zone}`

interface Row {
  type: string
  value: string
  ttl: number
}

const row = fc.record({
  type: fc.constantFrom(...TYPES),
  value: fc.constantFrom('v1', 'v2', 'v3'),
  ttl: fc.constantFrom(60, 300, 3600),
})

const caseOf = fc.record({
  current: fc.array(row, { maxLength: 5 }),
  record: row,
  /** Whether the caller checked against the types there now, or against others (a change came in between). */
  stale: fc.option(fc.subarray([...TYPES]), { nil: null }),
  owned: fc.boolean(),
  /** The stored serial, and the one the change asks for. */
  stored: fc.integer({ min: 1, max: 2_000_000_000 }),
  serial: fc.integer({ min: 1, max: 2_000_000_000 }),
  /** Whether something commits along with the change (its event, its delivery): a transaction around the write. */
  along: fc.boolean(),
})
type Generated = typeof caseOf extends fc.Arbitrary<infer T> ? T : never

const sorted = (rows: Row[]) =>
  rows
    .map((r) => ({ type: r.type, value: r.value, ttl: r.ttl }))
    .sort((a, b) => `${a.type} ${a.value} ${a.ttl}`.localeCompare(`${b.type} ${b.value} ${b.ttl}`))

/** The rule: the set becomes the record, the serial rises past the stored one, only while the other types are as checked. */
function expected(c: Generated) {
  const others = repo.otherTypes(c.current, c.record.type)
  const checked = c.stale === null ? others : [...c.stale].sort().join(',')
  const done = c.owned && checked === others
  return {
    done,
    checked,
    records: sorted(done ? [...c.current.filter((r) => r.type !== c.record.type), c.record] : c.current),
    serial: done ? Math.max(c.stored + 1, c.serial) : c.stored,
  }
}

forEachDialect((dialect) => {
  describe(`the record-set rule, in TypeScript and in the database (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    let b: TestAccount
    let zone: string
    let domainId: number
    before(async () => {
      t = await startTestApp(dialect)
      a = await t.account('Record set A')
      b = await t.account('Record set B')
      zone = await makeDomain(t, a)
      domainId = (await t.ctx.db.selectFrom('domains').select('id').where('name', '=', zone).executeTakeFirstOrThrow())
        .id
    })
    after(() => t.close())

    /** Runs one case through `path` on a zone set to its start, and reads what it left. */
    const run = async (c: Generated, path: 'rule' | 'database' | 'by name', n: number) => {
      const db = t.ctx.db
      await db.deleteFrom('dns_records').where('domain_id', '=', domainId).execute()
      await repo.insertRecords(
        db,
        domainId,
        c.current.map((r) => ({ ...r, name: NAME(zone) })) as NormalisedRecord[],
        '2026-01-01T00:00:00Z',
      )
      await db.updateTable('domains').set({ zone_serial: c.stored }).where('id', '=', domainId).execute()
      const record = { ...c.record, name: NAME(zone) } as NormalisedRecord
      const change = { now: '2026-01-02T00:00:00Z', serial: c.serial, others: expected(c).checked }
      const accountId = c.owned ? a.accountId : b.accountId
      const requestId = `rs-${dialect}-${path}-${n}`
      const audit: PendingAudit = {
        row: {
          account_id: a.accountId,
          ip: '127.0.0.1',
          method: 'PATCH',
          path: '/rs',
          status: 200,
          request_id: requestId,
          created_at: change.now,
        },
        written: false,
        claimed: false,
        closed: false,
      }
      const done = await withRequestAudit(audit, () =>
        path === 'by name'
          ? writeRecordSetAt(db, accountId, zone, record, change)
          : path === 'database'
            ? writeRecordSet(db, accountId, domainId, record, change, c.along ? async () => {} : null)
            : db
                .transaction()
                .execute(async (trx) => {
                  if (!(await repo.replaceRecordSetIn(trx, accountId, domainId, record, change)))
                    throw new Error('stale')
                  return true
                })
                .catch((err: Error) => {
                  if (err.message === 'stale') return false
                  throw err
                }),
      )
      const rows = await repo.listRecordsAt(db, a.accountId, domainId, NAME(zone))
      const { zone_serial } = await db
        .selectFrom('domains')
        .select('zone_serial')
        .where('id', '=', domainId)
        .executeTakeFirstOrThrow()
      const audited = await db.selectFrom('audit_log').select('id').where('request_id', '=', requestId).execute()
      return {
        done,
        records: sorted(rows.map((r) => ({ type: r.type, value: r.value, ttl: r.ttl }))),
        serial: Number(zone_serial),
        audited: audited.length,
        written: audit.written,
      }
    }

    it('gives the outcome of the rule on every path, for generated cases', async () => {
      let n = 0
      await fc.assert(
        fc.asyncProperty(caseOf, async (c) => {
          const want = expected(c)
          const outcome = { done: want.done, records: want.records, serial: want.serial }
          const paths =
            dialect === 'postgres' ? (['rule', 'database', 'by name'] as const) : (['rule', 'database'] as const)
          for (const path of paths) {
            const got = await run(c, path, n++)
            assert.deepEqual({ done: got.done, records: got.records, serial: got.serial }, outcome, path)
            const audited = want.done ? 1 : 0
            assert.deepEqual([got.audited, got.written], [audited, want.done], `${path}: the audit row with the change`)
          }
        }),
        { numRuns: 60 },
      )
    })
  })
})
