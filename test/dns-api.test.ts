import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { makeDomain, uniqueName } from './helpers/fixtures/domains.js'

const updated = { status: 200, status_description: 'DNS successfully updated' }

forEachDialect((dialect) => {
  describe(`DNS records API over HTTPS (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    let b: TestAccount
    before(async () => {
      t = await startTestApp(dialect)
      a = await t.account('DNS A')
      b = await t.account('DNS B')
    })
    after(() => t.close())

    const records = async (domain: string, key = a.key) => {
      const r = await t.request('GET', `/domains/${domain}/dns`, { key })
      assert.equal(r.status, 200, r.text)
      return r.body.data.records as { type: string; name: string; value: string; ttl: number }[]
    }
    const serial = async (domain: string) => {
      const zone = (await t.request('GET', `/domains/${domain}/dns/zone`, { key: a.key })).body.data.zone as string
      return Number(/SOA\s+\S+\s+\S+\s+\(?\s*(\d+)/.exec(zone)![1])
    }

    it('replaces the zone with PUT and shows FQDN names with a trailing dot, records last in data', async () => {
      const d = await makeDomain(t, a)
      const put = await t.request('PUT', `/domains/${d}/dns`, {
        key: a.key,
        body: {
          records: [
            { type: 'A', name: '@', value: '192.0.2.1', ttl: 300 },
            { type: 'a', name: 'www', value: '192.0.2.2' },
            { type: 'MX', name: '', value: '10 mail', ttl: 3600 },
            { type: 'AAAA', name: `ipv6.${d}.`, value: '2001:DB8:0:0::1', ttl: 3600 },
            { type: 'CNAME', name: `blog.${d}`, value: 'ghs.googlehosted.com', ttl: 3600 },
            { type: 'TXT', name: '_acme-challenge', value: 'one', ttl: 120 },
            { type: 'TXT', name: '_acme-challenge', value: 'two', ttl: 120 },
          ],
        },
      })
      assert.deepEqual(put.body, updated)
      const r = await t.request('GET', `/domains/${d}/dns`, { key: a.key })
      assert.equal(r.body.status, 200)
      assert.deepEqual(Object.keys(r.body.data), ['domain', 'records'])
      assert.match(r.text, /"records":\[.*\]\}\}$/, 'records is the last key of data')
      assert.equal(r.body.data.domain, d)
      const list = r.body.data.records
      const find = (type: string, name: string) =>
        list.filter((x: { type: string; name: string }) => x.type === type && x.name === name)
      assert.deepEqual(find('A', `${d}.`), [{ type: 'A', name: `${d}.`, value: '192.0.2.1', ttl: 300 }])
      assert.deepEqual(
        find('A', `www.${d}.`),
        [{ type: 'A', name: `www.${d}.`, value: '192.0.2.2', ttl: 3600 }],
        'default TTL 3600',
      )
      assert.equal(find('MX', `${d}.`)[0].value, `10 mail.${d}.`)
      assert.equal(find('AAAA', `ipv6.${d}.`)[0].value, '2001:db8::1')
      assert.equal(find('CNAME', `blog.${d}.`)[0].value, 'ghs.googlehosted.com.')
      assert.deepEqual(
        find('TXT', `_acme-challenge.${d}.`)
          .map((x: { value: string }) => x.value)
          .sort(),
        ['one', 'two'],
        'two TXT values on one name',
      )
      assert.equal(list.length, 7)
    })

    it('keeps the zone unchanged when one record of a PUT is invalid, naming the record', async () => {
      const d = await makeDomain(t, a)
      await t.request('PUT', `/domains/${d}/dns`, {
        key: a.key,
        body: { records: [{ type: 'A', name: 'www', value: '192.0.2.2' }] },
      })
      const before = await serial(d)
      const cases: [unknown, string][] = [
        [
          { type: 'A', name: 'bad', value: '300.1.1.1' },
          'Invalid DNS record A bad: value "300.1.1.1" is not an IPv4 address',
        ],
        [
          { type: 'A', name: 'x.other.nl', value: '192.0.2.1' },
          `Invalid DNS record A x.other.nl: name is outside the zone ${d}`,
        ],
        [
          { type: 'A', name: 'x', value: '192.0.2.1', ttl: 5 },
          'Invalid DNS record A x: ttl must be an integer from 60 to 86400',
        ],
        [
          { type: 'SPF', name: 'x', value: 'v=spf1' },
          'Invalid DNS record SPF x: unsupported type (use one of A, AAAA, CNAME, MX, TXT, NS, SRV, CAA, TLSA, SSHFP, DS)',
        ],
        [
          { type: 'CNAME', name: '@', value: 'x.example.net' },
          'Invalid DNS record CNAME @: a CNAME record is not allowed at the zone apex',
        ],
      ]
      for (const [bad, text] of cases) {
        const r = await t.request('PUT', `/domains/${d}/dns`, {
          key: a.key,
          body: { records: [{ type: 'A', name: 'ok', value: '192.0.2.9' }, bad] },
        })
        assert.deepEqual(r.body, { status: 400, status_description: text })
      }
      const clash = await t.request('PUT', `/domains/${d}/dns`, {
        key: a.key,
        body: {
          records: [
            { type: 'CNAME', name: 'www', value: 'x.example.net' },
            { type: 'A', name: 'www', value: '192.0.2.1' },
          ],
        },
      })
      assert.equal(clash.status, 400)
      assert.match(clash.body.status_description, /^Invalid DNS record CNAME www\./)
      assert.deepEqual(await records(d), [{ type: 'A', name: `www.${d}.`, value: '192.0.2.2', ttl: 3600 }])
      assert.equal(await serial(d), before, 'a refused change keeps the serial')
      const missing = await t.request('PUT', `/domains/${d}/dns`, { key: a.key, body: {} })
      assert.deepEqual(missing.body.status_description, 'Missing records')
    })

    it('takes a PUT body without a Content-Type (certbot) and raises the serial on each change', async () => {
      const d = await makeDomain(t, a)
      const s0 = await serial(d)
      const r = await t.request('PUT', `/domains/${d}/dns`, {
        key: a.key,
        rawBody: JSON.stringify({ records: [{ type: 'TXT', name: '_acme-challenge', value: 'abc', ttl: 60 }] }),
      })
      assert.deepEqual(r.body, updated)
      const s1 = await serial(d)
      assert.ok(s1 > s0)
      await t.request('PUT', `/domains/${d}/dns`, { key: a.key, body: { records: [] } })
      assert.ok((await serial(d)) > s1)
      assert.deepEqual(await records(d), [])
    })

    it('PATCH upserts one record set (lego), with relative, FQDN and FQDN-with-dot names; value null deletes the set', async () => {
      const d = await makeDomain(t, a)
      const patch = (record: unknown) => t.request('PATCH', `/domains/${d}/dns`, { key: a.key, body: { record } })
      assert.deepEqual((await patch({ type: 'TXT', name: '_acme-challenge', value: 'x', ttl: 120 })).body, updated)
      assert.deepEqual(await records(d), [{ type: 'TXT', name: `_acme-challenge.${d}.`, value: 'x', ttl: 120 }])
      // The same set again, by FQDN with and without the dot: replaced, not added.
      await patch({ type: 'TXT', name: `_acme-challenge.${d}.`, value: 'y', ttl: 120 })
      await patch({ type: 'TXT', name: `_acme-challenge.${d}`, value: 'z', ttl: 300 })
      assert.deepEqual(await records(d), [{ type: 'TXT', name: `_acme-challenge.${d}.`, value: 'z', ttl: 300 }])
      await patch({ type: 'A', name: 'www', value: '192.0.2.10' })
      assert.equal((await records(d)).length, 2)
      const cname = await patch({ type: 'CNAME', name: 'www', value: 'elsewhere.example.net' })
      assert.equal(cname.status, 400, 'a CNAME cannot join an A record')
      assert.deepEqual((await patch({ type: 'TXT', name: '_acme-challenge', value: null })).body, updated)
      assert.deepEqual(await records(d), [{ type: 'A', name: `www.${d}.`, value: '192.0.2.10', ttl: 3600 }])
      const noValue = await patch({ type: 'A', name: 'www' })
      assert.deepEqual(noValue.body, {
        status: 400,
        status_description: 'Invalid DNS record A www: value is required (null deletes the record set)',
      })
      const outside = await patch({ type: 'A', name: 'www.example.com.', value: '192.0.2.1' })
      assert.deepEqual(outside.body, {
        status: 400,
        status_description: `Invalid DNS record A www.example.com.: name is outside the zone ${d}`,
      })
    })

    it('DELETE with a body removes matching records, all values when value is omitted, and succeeds when nothing matches', async () => {
      const d = await makeDomain(t, a)
      await t.request('PUT', `/domains/${d}/dns`, {
        key: a.key,
        body: {
          records: [
            { type: 'TXT', name: '_acme-challenge', value: 'one' },
            { type: 'TXT', name: '_acme-challenge', value: 'two' },
            { type: 'TXT', name: 'other', value: 'three' },
            { type: 'MX', name: '@', value: '10 mx1.example.net.' },
            { type: 'MX', name: '@', value: '20 mx2.example.net.' },
          ],
        },
      })
      // A body without a Content-Type, as clients send DELETE bodies.
      const del = await t.request('DELETE', `/domains/${d}/dns`, {
        key: a.key,
        rawBody: JSON.stringify({ record: { type: 'TXT', name: `_acme-challenge.${d}.`, value: 'one' } }),
      })
      assert.deepEqual(del.body, updated)
      let list = await records(d)
      assert.deepEqual(
        list.filter((r) => r.name === `_acme-challenge.${d}.`).map((r) => r.value),
        ['two'],
      )
      // A quoted TXT value matches the stored text; an MX value is matched in canonical form.
      await t.request('DELETE', `/domains/${d}/dns`, {
        key: a.key,
        body: { record: { type: 'TXT', name: '_acme-challenge', value: '"two"' } },
      })
      await t.request('DELETE', `/domains/${d}/dns`, {
        key: a.key,
        body: { record: { type: 'MX', name: '', value: '10 MX1.example.net' } },
      })
      list = await records(d)
      assert.deepEqual(list.map((r) => `${r.type} ${r.name} ${r.value}`).sort(), [
        `MX ${d}. 20 mx2.example.net.`,
        `TXT other.${d}. three`,
      ])
      const s = await serial(d)
      const again = await t.request('DELETE', `/domains/${d}/dns`, {
        key: a.key,
        body: { record: { type: 'TXT', name: '_acme-challenge', value: 'one' } },
      })
      assert.deepEqual(again.body, updated, 'idempotent')
      assert.equal(await serial(d), s, 'nothing removed, no new serial')
      await t.request('DELETE', `/domains/${d}/dns`, { key: a.key, body: { record: { type: 'TXT', name: 'other' } } })
      assert.deepEqual(
        (await records(d)).map((r) => r.type),
        ['MX'],
      )
      const badName = await t.request('DELETE', `/domains/${d}/dns`, {
        key: a.key,
        body: { record: { type: 'TXT', name: 'x.example.org.' } },
      })
      assert.deepEqual(badName.body, {
        status: 400,
        status_description: `Invalid DNS record TXT x.example.org.: name is outside the zone ${d}`,
      })
    })

    it('exports the zone file with SOA and apex NS, and imports one', async () => {
      const d = await makeDomain(t, a)
      await t.request('PATCH', `/domains/${d}/dns`, {
        key: a.key,
        body: { record: { type: 'A', name: 'www', value: '192.0.2.7' } },
      })
      const zone = (await t.request('GET', `/domains/${d}/dns/zone/`, { key: a.key })).body.data.zone as string
      assert.match(zone, new RegExp(`^\\$ORIGIN ${d.replace(/\./g, '\\.')}\\.`, 'm'))
      assert.match(zone, /IN\s+SOA\s+ns1\.hostapi\.test\./)
      assert.match(zone, /IN\s+NS\s+ns2\.hostapi\.test\./)
      assert.match(zone, /^www\s+3600\s+IN\s+A\s+192\.0\.2\.7$/m)

      const text = [
        `$ORIGIN ${d}.`,
        '$TTL 600',
        `@ IN SOA ns.other.net. admin.other.net. ( 1 7200 3600 1209600 300 )`,
        '@ IN NS ns.other.net.',
        '@ IN A 192.0.2.1 ; the apex',
        'www IN CNAME @',
        'mail 300 IN MX 10 mx.example.net.',
        '_sip._tcp IN SRV 10 5 5060 sip',
        'txt IN TXT "hello " "world"',
      ].join('\n')
      const imp = await t.request('PUT', `/domains/${d}/dns/zone`, { key: a.key, body: { zone: text } })
      assert.deepEqual(imp.body, updated)
      const list = await records(d)
      assert.deepEqual(list.map((r) => `${r.type} ${r.name} ${r.value} ${r.ttl}`).sort(), [
        `A ${d}. 192.0.2.1 600`,
        `CNAME www.${d}. ${d}. 600`,
        `MX mail.${d}. 10 mx.example.net. 300`,
        `SRV _sip._tcp.${d}. 10 5 5060 sip.${d}. 600`,
        `TXT txt.${d}. hello world 600`,
      ])
      const bad = await t.request('PUT', `/domains/${d}/dns/zone`, {
        key: a.key,
        body: { zone: 'ok IN A 192.0.2.1\nbroken IN A nope\n' },
      })
      assert.equal(bad.status, 400)
      assert.match(bad.body.status_description, /^Invalid zone file: line 2: /)
      assert.equal((await records(d)).length, 5, 'a bad import changes nothing')
    })

    it('refuses a zone of Unicode spaces and format characters with a 400 and keeps answering', {
      timeout: 20_000,
    }, async () => {
      const d = await makeDomain(t, a)
      // Each of these once made the tokenizer loop without advancing, taking every tenant's requests with it.
      for (const ch of ['\u00a0', '\u000b', '\u000c', '\ufeff', '\u2028', '\u3000', '\u0085', '\u1680']) {
        for (const path of [`/domains/${d}/dns/zone`, `/domains/${d}/dns/zone?test=1`]) {
          const r = await t.request('PUT', path, { key: a.key, body: { zone: ch } })
          assert.equal(r.status, 400, `U+${ch.codePointAt(0)!.toString(16)} ${path}`)
          assert.match(r.body.status_description, /^Invalid zone file: line 1: /)
          // Inside a name, U+FEFF is dropped by the IDN mapping (UTS #46 ignores it); the others are refused.
          const mixed = await t.request('PUT', path, { key: a.key, body: { zone: `www${ch}3600 IN A 192.0.2.1\n` } })
          assert.equal(mixed.status, ch === '\ufeff' ? 200 : 400, `www U+${ch.codePointAt(0)!.toString(16)}3600`)
        }
      }
      assert.equal((await t.request('GET', '/whoami', { key: a.key })).status, 200)
    })

    it('accepts its own GET output back in a PUT unchanged (acme.sh adds one record to what it read)', async () => {
      const d = await makeDomain(t, a)
      await t.request('PUT', `/domains/${d}/dns`, {
        key: a.key,
        body: {
          records: [
            { type: 'MX', name: '@', value: '10 mail.example.net' },
            { type: 'CAA', name: '', value: '0 issue "letsencrypt.org"' },
            { type: 'SRV', name: '_sip._tcp', value: '10 5 5060 sip.example.net.' },
            { type: 'TXT', name: 'quote', value: 'say "hi" \\ bye' },
            { type: 'TXT', name: 'long', value: 'k'.repeat(600) },
            { type: 'AAAA', name: 'v6', value: '2001:db8::1' },
          ],
        },
      })
      const before = await records(d)
      const put = await t.request('PUT', `/domains/${d}/dns`, {
        key: a.key,
        body: { records: [...before, { type: 'TXT', name: `_acme-challenge.${d}.`, value: 'new', ttl: 60 }] },
      })
      assert.deepEqual(put.body, updated)
      const after = await records(d)
      assert.deepEqual(
        after.filter((r) => r.name !== `_acme-challenge.${d}.`),
        before,
      )
      assert.equal(after.find((r) => r.name === `quote.${d}.`)!.value, 'say "hi" \\ bye')
      assert.equal(after.find((r) => r.name === `long.${d}.`)!.value.length, 600)
    })

    it('reads a body over the general limit off the event loop with the same answers: bad JSON, NUL', async () => {
      const d = await makeDomain(t, a)
      const pad = 'x'.repeat(1024 * 1024 + 10)
      const broken = await t.request('PUT', `/domains/${d}/dns/zone`, {
        key: a.key,
        rawBody: `{"zone": "; ${pad}\n"`,
        headers: { 'content-type': 'application/json' },
      })
      assert.deepEqual(broken.body, { status: 400, status_description: 'Invalid JSON body' })
      const nul = await t.request('PUT', `/domains/${d}/dns/zone`, { key: a.key, body: { zone: `; ${pad}\u0000\n` } })
      assert.deepEqual(nul.body, {
        status: 400,
        status_description: 'Invalid JSON body: text must not contain NUL (\\u0000)',
      })
      const fine = await t.request('PUT', `/domains/${d}/dns/zone?test=1`, {
        key: a.key,
        body: { zone: `; ${pad}\nwww IN A 192.0.2.1\n` },
      })
      assert.deepEqual(fine.body, updated)
    })

    it('imports a zone file larger than the general 1 MiB body limit', async () => {
      const d = await makeDomain(t, a)
      const lines = Array.from(
        { length: 3000 },
        (_, i) => `host${i} 3600 IN TXT "${'x'.repeat(400)}" ; padding to make the file large`,
      )
      const zone = lines.join('\n')
      assert.ok(Buffer.byteLength(JSON.stringify({ zone })) > 1024 * 1024)
      const r = await t.request('PUT', `/domains/${d}/dns/zone`, { key: a.key, body: { zone } })
      assert.deepEqual(r.body, updated)
      assert.equal((await records(d)).length, 3000)
      const tooBig = await t.request('PUT', `/domains/${d}/dns`, {
        key: a.key,
        body: { records: [], padding: 'x'.repeat(1024 * 1024 + 10) },
      })
      assert.equal(tooBig.status, 413, 'other routes keep the general limit')
    })

    it('answers 400 "You have no access to this resource" for another account\'s domain on every DNS route', async () => {
      const theirs = await makeDomain(t, b, uniqueName('theirs'))
      await t.request('PUT', `/domains/${theirs}/dns`, {
        key: b.key,
        body: { records: [{ type: 'A', name: 'www', value: '192.0.2.1' }] },
      })
      const calls: [string, string, unknown][] = [
        ['GET', `/domains/${theirs}/dns`, undefined],
        ['PUT', `/domains/${theirs}/dns`, { records: [] }],
        ['PATCH', `/domains/${theirs}/dns`, { record: { type: 'A', name: 'www', value: '192.0.2.2' } }],
        ['DELETE', `/domains/${theirs}/dns`, { record: { type: 'A', name: 'www' } }],
        ['GET', `/domains/${theirs}/dns/zone`, undefined],
        ['PUT', `/domains/${theirs}/dns/zone`, { zone: '' }],
        // certbot walks up the name: a sub-domain of nobody's domain.
        ['GET', `/domains/_acme-challenge.www.${theirs}/dns`, undefined],
      ]
      for (const [method, path, body] of calls) {
        const r = await t.request(method, path, { key: a.key, body })
        assert.deepEqual(
          r.body,
          {
            status: 400,
            status_description: path.includes('_acme') ? 'Invalid domain name' : 'You have no access to this resource',
          },
          `${method} ${path}`,
        )
      }
      assert.deepEqual(
        await records(theirs, b.key),
        [{ type: 'A', name: `www.${theirs}.`, value: '192.0.2.1', ttl: 3600 }],
        'their zone is untouched',
      )
      const sub = await t.request('GET', `/domains/www.${theirs}/dns`, { key: a.key })
      assert.deepEqual(sub.body, { status: 400, status_description: 'You have no access to this resource' })
      const doubled = await t.request('GET', `/api/v2//domains/${theirs}/dns`, { key: b.key })
      assert.equal(doubled.status, 200, 'a doubled slash is accepted')
    })
  })
})
