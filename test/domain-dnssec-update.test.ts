import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { makeDomain, uniqueName } from './helpers/fixtures/domains.js'

/** A P-256 public key in DNSKEY form, base64. */
function p256Key(): string {
  const jwk = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' })
  return Buffer.concat([Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]).toString('base64')
}

/** A DSA public key in RFC 2536 form with T = 0: T, Q (160 bits), P, G, Y (512 bits each). */
function dsaKey(): string {
  const big = (n: number) => Buffer.concat([Buffer.from([0x80 | randomBytes(1)[0]!]), randomBytes(n - 1)])
  return Buffer.concat([Buffer.from([0]), big(20), big(64), big(64), big(64)]).toString('base64')
}

const external = { nameservers: ['ns1.example.net', 'ns2.example.net'] }

forEachDialect((dialect) => {
  describe(`PUT /domains/{domain} dnssec, as clients send it (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    before(async () => {
      t = await startTestApp(dialect)
      a = await t.account('DNSSEC update')
    })
    after(() => t.close())

    const put = (name: string, body: unknown) => t.request('PUT', `/domains/${name}`, { key: a.key, body })
    const get = async (name: string) => (await t.request('GET', `/domains/${name}`, { key: a.key })).body.data

    it('a zone served elsewhere: key fields without `enabled` turn DNSSEC on with that key; `{}` keeps it', async () => {
      const name = await makeDomain(t, a, uniqueName('sec-ext'))
      assert.equal((await put(name, external)).status, 200)
      const key = p256Key()
      // As a generated client sends it: the numbers as strings, no `enabled`.
      const on = await put(name, { dnssec: { flags: '257', alg: '13', protocol: '3', pubKey: key } })
      assert.equal(on.status, 200, JSON.stringify(on.body))
      assert.equal(on.body.data.dnssec_enabled, 1)
      assert.deepEqual(on.body.data.dnssec_keys, [{ alg: 13, flags: 257, pubKey: key }])
      const parent = await t.ctx.drivers.registry.dnssec(name)
      assert.deepEqual(
        parent.map((k) => [k.flags, k.algorithm, k.publicKey]),
        [[257, 13, key]],
      )

      // An empty dnssec object is no change: DNSSEC stays on, the key stays, at the registry too.
      const same = await put(name, { dnssec: {} })
      assert.equal(same.status, 200)
      assert.equal(same.body.data.dnssec_enabled, 1)
      assert.deepEqual(same.body.data.dnssec_keys, [{ alg: 13, flags: 257, pubKey: key }])
      assert.equal((await t.ctx.drivers.registry.dnssec(name)).length, 1)

      // The answer of GET carries integers, as real clients decode them.
      const d = await get(name)
      assert.ok(Number.isInteger(d.dnssec_keys[0].alg) && Number.isInteger(d.dnssec_keys[0].flags))

      const off = await put(name, { dnssec: { enabled: false } })
      assert.equal(off.body.data.dnssec_enabled, 0)
      assert.deepEqual(off.body.data.dnssec_keys, [])
      assert.deepEqual(await t.ctx.drivers.registry.dnssec(name), [])
    })

    it('a zone served here: key fields without `enabled` turn signing on; `{}` leaves the key', async () => {
      const name = await makeDomain(t, a, uniqueName('sec-own'))
      const on = await put(name, { dnssec: { flags: 257, alg: 13, protocol: 3, pubKey: p256Key() } })
      assert.equal(on.status, 200, JSON.stringify(on.body))
      assert.equal(on.body.data.dnssec_enabled, 1)
      const [made] = on.body.data.dnssec_keys
      assert.equal(made.alg, 13)
      assert.equal(made.flags, 257)
      const same = await put(name, { dnssec: {} })
      assert.equal(same.body.data.dnssec_enabled, 1)
      assert.deepEqual(same.body.data.dnssec_keys, [made], 'the key made here is kept')
      const off = await put(name, { dnssec: { enabled: 0 } })
      assert.equal(off.body.data.dnssec_enabled, 0)
    })

    it('takes algorithms 6 and 12 of the published list, their keys checked', async () => {
      const name = await makeDomain(t, a, uniqueName('sec-alg'))
      await put(name, external)
      const dsa = dsaKey()
      const six = await put(name, { dnssec: { enabled: 1, flags: 257, alg: 6, pubKey: dsa } })
      assert.equal(six.status, 200, JSON.stringify(six.body))
      assert.deepEqual(six.body.data.dnssec_keys, [{ alg: 6, flags: 257, pubKey: dsa }])
      const gost = randomBytes(64).toString('base64')
      const twelve = await put(name, { dnssec: { flags: 257, alg: 12, pubKey: gost } })
      assert.equal(twelve.status, 200, JSON.stringify(twelve.body))
      assert.deepEqual(twelve.body.data.dnssec_keys, [{ alg: 12, flags: 257, pubKey: gost }])
      const [registered] = await t.ctx.drivers.registry.dnssec(name)
      assert.equal(registered!.algorithm, 12)
      assert.match(registered!.digest, /^[0-9a-f]{64}$/)

      const shortDsa = await put(name, { dnssec: { flags: 257, alg: 6, pubKey: randomBytes(100).toString('base64') } })
      assert.deepEqual(shortDsa.body, {
        status: 400,
        status_description: 'Invalid dnssec: pubKey must be a DSA key in RFC 2536 form (T, Q, P, G, Y) for alg 6',
      })
      const shortGost = await put(name, { dnssec: { flags: 257, alg: 12, pubKey: randomBytes(32).toString('base64') } })
      assert.deepEqual(shortGost.body, {
        status: 400,
        status_description: 'Invalid dnssec: pubKey must be a GOST R 34.10-2001 key of 64 bytes for alg 12',
      })
      const unknown = await put(name, { dnssec: { flags: 257, alg: 9, pubKey: gost } })
      assert.deepEqual(unknown.body, {
        status: 400,
        status_description: 'Invalid dnssec: alg must be one of 5, 6, 7, 8, 10, 12, 13, 14, 15, 16',
      })
      assert.equal((await get(name)).dnssec_keys[0].alg, 12, 'a refused key changes nothing')
    })
  })
})
