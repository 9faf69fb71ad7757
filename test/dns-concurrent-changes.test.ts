import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { makeDomain, uniqueName } from './helpers/fixtures/domains.js'

forEachDialect((dialect) => {
  describe(`concurrent PATCHes of one zone (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    before(async () => {
      t = await startTestApp(dialect)
      a = await t.account('Concurrent')
    })
    after(() => t.close())

    const patch = (zone: string, record: Record<string, unknown>) =>
      t.request('PATCH', `/domains/${zone}/dns`, { key: a.key, body: { record } })
    const at = async (zone: string, name: string) =>
      (await t.request('GET', `/domains/${zone}/dns`, { key: a.key })).body.data.records.filter(
        (r: { name: string }) => r.name === `${name}.${zone}.`,
      )

    it('20 PATCHes of one record set at once leave one record, the serial raised by each', async () => {
      const zone = await makeDomain(t, a, uniqueName('race'))
      const serial = async () => {
        const text = (await t.request('GET', `/domains/${zone}/dns/zone`, { key: a.key })).body.data.zone
        return Number(/(\d+) ; serial/.exec(text)![1])
      }
      const first = await serial()
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) => patch(zone, { type: 'TXT', name: 'set', value: `v${i}`, ttl: 60 })),
      )
      assert.deepEqual(new Set(answers.map((r) => r.status)), new Set([200]))
      assert.equal((await at(zone, 'set')).length, 1)
      assert.equal(await serial(), first + 20)
    })

    it('a CNAME and an A record at one name at once: one of them, never both', async () => {
      for (let i = 0; i < 5; i++) {
        const zone = await makeDomain(t, a, uniqueName('cname'))
        const answers = await Promise.all([
          patch(zone, { type: 'CNAME', name: 'www', value: 'elsewhere.example.com.', ttl: 60 }),
          patch(zone, { type: 'A', name: 'www', value: '192.0.2.1', ttl: 60 }),
        ])
        assert.deepEqual(answers.map((r) => r.status).sort(), [200, 400])
        assert.equal((await at(zone, 'www')).length, 1)
      }
    })
  })
})
