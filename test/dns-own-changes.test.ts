// Changes hostapi makes itself in a customer's zone (a certificate's validation TXT records, written and removed by
// the certificate's job) land whole while other changes of the zone are made at the same time: none drops a value
// added at once at the same name, and none undoes a change the customer made meanwhile. The defect this was written
// for: the validation record was added by reading the zone and writing it back whole (or replacing the record set),
// so two certificates validated at once kept only one value, and the other stayed pending for ever. The last test
// reads every source file for such a replacement made anywhere but the customer's own routes and the seeding.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import ts from 'typescript'
import { accountDnsOf, type AccountDns } from '../src/modules/certificates/account-dns.js'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { makeDomain, uniqueName } from './helpers/fixtures/domains.js'
import { sourceFiles } from './helpers/source-files.js'

const src = new URL('../src', import.meta.url).pathname

/**
 * Where a record set or a whole zone may be replaced: the customer's own requests (the DNS routes, and the service
 * and store that carry them out) and the seeding of a zone just made. Any other code that changes a zone adds or
 * removes records (DnsService.add and remove), so it writes nothing it read before.
 */
const REPLACES_ZONES = new Set([
  'modules/domains/dns/dns.routes.ts',
  'modules/domains/dns/dns.service.ts',
  'modules/domains/domains.seed.ts',
  'seed/seed-file.ts',
])

/** Calls of a replacing method (`replace`, `patch`, `replaceAll`, `replaceSet`, `importZone`) on a DNS service or store. */
function zoneReplacements(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8')
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const found: string[] = []
  const visit = (node: ts.Node) => {
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      ['replace', 'patch', 'replaceAll', 'replaceSet', 'importZone'].includes(node.expression.name.text) &&
      /(^|\.)(dns|store)$/.test(node.expression.expression.getText(source))
    ) {
      const { line } = source.getLineAndCharacterOfPosition(node.getStart(source))
      found.push(`${path.relative(src, file)}:${line + 1}: ${node.expression.getText(source)}`)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

describe("hostapi's own changes in a zone add or remove records", () => {
  it('replaces record sets and zones only for the customer and the seeding (every source file read)', () => {
    const files = sourceFiles(src)
    assert.ok(files.length > 100)
    const found = files.filter((f) => !REPLACES_ZONES.has(path.relative(src, f))).flatMap(zoneReplacements)
    assert.deepEqual(found, [], 'a zone changed by code of its own: use DnsService.add or remove')
    // The rule sees what it looks for: the customer's routes replace.
    assert.ok(zoneReplacements(path.join(src, 'modules/domains/dns/dns.routes.ts')).length >= 2)
  })
})

forEachDialect((dialect) => {
  describe(`hostapi's own changes in a zone, made alongside others (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    let dns: AccountDns
    before(async () => {
      t = await startTestApp(dialect)
      a = await t.account('Own changes')
      dns = accountDnsOf(t.ctx.services.domains, t.ctx.services.dns)
    })
    after(() => t.close())

    const records = async (zone: string) =>
      (await t.request('GET', `/domains/${zone}/dns`, { key: a.key })).body.data.records as {
        type: string
        name: string
        value: string
      }[]
    const valuesAt = async (zone: string, name: string, type = 'TXT') =>
      (await records(zone))
        .filter((r) => r.type === type && r.name === `${name}.`)
        .map((r) => r.value)
        .sort()

    it('keeps every validation value added at once, and every change the customer made meanwhile', async () => {
      const zone = await makeDomain(t, a, uniqueName('own'))
      const name = `_acme-challenge.${zone}`
      const values = Array.from({ length: 12 }, (_, i) => `token-${i}-${'x'.repeat(30)}`)
      const customer = Array.from({ length: 6 }, (_, i) => ({ type: 'A', name: `www${i}`, value: `192.0.2.${i + 1}` }))
      const answers = await Promise.all([
        ...values.map((v) => dns.addTxt(a.accountId, zone, name, v)),
        ...customer.map((record) =>
          t.request('PATCH', `/domains/${zone}/dns`, { key: a.key, body: { record: { ...record, ttl: 300 } } }),
        ),
      ])
      for (const r of answers.slice(values.length)) assert.equal((r as { status: number }).status, 200)
      assert.deepEqual(await valuesAt(zone, name), [...values].sort(), 'every value added at once is there')
      for (const c of customer)
        assert.deepEqual(await valuesAt(zone, `${c.name}.${zone}`, 'A'), [c.value], `the customer's ${c.name} is there`)

      // Removed and added at once: the removed values go, the added ones stay, the customer's records too.
      const added = values.slice(0, 4).map((v) => `${v}-new`)
      await Promise.all([
        ...values.slice(0, 6).map((v) => dns.removeTxt(a.accountId, zone, name, v)),
        ...added.map((v) => dns.addTxt(a.accountId, zone, name, v)),
        t.request('PATCH', `/domains/${zone}/dns`, {
          key: a.key,
          body: { record: { type: 'TXT', name: 'note', value: 'kept', ttl: 300 } },
        }),
      ])
      assert.deepEqual(await valuesAt(zone, name), [...values.slice(6), ...added].sort())
      assert.deepEqual(await valuesAt(zone, `note.${zone}`), ['kept'])
      assert.equal((await records(zone)).filter((r) => r.type === 'A').length, customer.length)
    })

    it('adds a value once however often it is added, and refuses one beside a CNAME', async () => {
      const zone = await makeDomain(t, a, uniqueName('own'))
      const name = `_acme-challenge.${zone}`
      await Promise.all([1, 2, 3].map(() => dns.addTxt(a.accountId, zone, name, 'same-value')))
      assert.deepEqual(await valuesAt(zone, name), ['same-value'])

      const alias = `alias.${zone}`
      const cname = { type: 'CNAME', name: 'alias', value: `target.${zone}.`, ttl: 300 }
      assert.equal(
        (await t.request('PATCH', `/domains/${zone}/dns`, { key: a.key, body: { record: cname } })).status,
        200,
      )
      await assert.rejects(dns.addTxt(a.accountId, zone, alias, 'beside-a-cname'), /CNAME/)
      assert.deepEqual(await valuesAt(zone, alias), [])
    })
  })
})
