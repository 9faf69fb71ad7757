import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../src/clock.js'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import { makeCertificatePackage } from './helpers/fixtures/certificates.js'
import { certificateNames, opensslCsr, opensslVerify } from './helpers/pki.js'

// Listing certificates, tenancy, sub-users and expiry; the demo data.
forEachDialect((dialect) => {
  describe(`certificates over HTTPS (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    let b: TestAccount
    const clock = new ManualClock()
    before(async () => {
      t = await startTestApp(dialect, { clock })
      a = await t.account('Certificates A')
      b = await t.account('Certificates B')
    })
    after(() => t.close())

    const get = (id: number, key = a.key) => t.request('GET', `/certificates/${id}`, { key })
    const request = (id: number, body: unknown, key = a.key) =>
      t.request('POST', `/certificates/${id}/request`, { key, body })

    it('lists certificates newest first, paged, with search', async () => {
      const c = await t.account('Paging')
      const ids = [
        await makeCertificatePackage(t, c),
        await makeCertificatePackage(t, c),
        await makeCertificatePackage(t, c, 3),
      ]
      const gen = opensslCsr('paging.example.net')
      assert.equal((await request(ids[0], { csr: gen, validation_method: 'http' }, c.key)).status, 200)

      const all = await t.request('GET', '/certificates/', { key: c.key })
      assert.equal(all.status, 200)
      assert.deepEqual(
        all.body.data.certificates.map((x: { id: number }) => x.id),
        [...ids].reverse(),
      )
      assert.deepEqual(all.body.data.pagination, { page: 1, limit: 25, total: 3, total_pages: 1 })
      const row = all.body.data.certificates.find((x: { id: number }) => x.id === ids[0])
      assert.equal(row.requested, true)
      assert.equal(row.common_name, 'paging.example.net')
      assert.equal(row.domain, 'paging.example.net')
      assert.equal(row.validation_method, 'http')
      const unrequested = all.body.data.certificates.find((x: { id: number }) => x.id === ids[1])
      assert.deepEqual([unrequested.requested, unrequested.domain], [false, ''])
      assert.equal('certificate' in row, false, 'the list leaves the PEM out')

      const p2 = await t.request('GET', '/certificates?page=2&limit=2', { key: c.key })
      assert.deepEqual(
        p2.body.data.certificates.map((x: { id: number }) => x.id),
        [ids[0]],
      )
      assert.deepEqual(p2.body.data.pagination, { page: 2, limit: 2, total: 3, total_pages: 2 })
      const out = await t.request('GET', '/certificates?page=3&limit=2', { key: c.key })
      assert.deepEqual(out.body, { status: 400, status_description: 'Page out of range' })
      const badLimit = await t.request('GET', '/certificates?limit=1000', { key: c.key })
      assert.equal(badLimit.status, 400)

      const byName = await t.request('GET', '/certificates?search=PAGING.example', { key: c.key })
      assert.deepEqual(
        byName.body.data.certificates.map((x: { id: number }) => x.id),
        [ids[0]],
      )
      const byProduct = await t.request('GET', '/certificates?search=multi', { key: c.key })
      assert.deepEqual(
        byProduct.body.data.certificates.map((x: { id: number }) => x.id),
        [ids[2]],
      )
      const none = await t.request('GET', '/certificates?search=%25', { key: c.key })
      assert.deepEqual(none.body.data.certificates, [])
      assert.deepEqual(none.body.data.pagination, { page: 1, limit: 25, total: 0, total_pages: 0 })
    })

    it('keeps each account to its own certificates', async () => {
      const id = await makeCertificatePackage(t, a)
      assert.deepEqual((await get(id, b.key)).body, { status: 404, status_description: 'Certificate not found' })
      assert.deepEqual(
        (await request(id, { csr: opensslCsr('x.example.com'), validation_method: 'http' }, b.key)).body,
        { status: 404, status_description: 'Certificate not found' },
      )
      assert.deepEqual((await get(987654)).body, { status: 404, status_description: 'Certificate not found' })
      const listed = await t.request('GET', '/certificates?limit=100', { key: b.key })
      assert.equal(
        listed.body.data.certificates.some((x: { id: number }) => x.id === id),
        false,
      )
      const bad = await t.request('GET', '/certificates/abc', { key: a.key })
      assert.equal(bad.status, 400)
      assert.match(bad.body.status_description, /^Invalid id/)
    })

    it('lets a sub-user with the certificates permission in, and ordering only with the order permission', async () => {
      const allowed = await t.subUser(a, { certificates: true })
      const denied = await t.subUser(a, { domains: true, order: true })
      const id = await makeCertificatePackage(t, a)
      assert.equal((await get(id, allowed.key)).status, 200)
      assert.equal((await t.request('GET', '/certificates/products', { key: allowed.key })).status, 200)
      for (const [method, path] of [
        ['GET', '/certificates'],
        ['GET', `/certificates/${id}`],
        ['GET', '/certificates/products'],
        ['POST', '/certificates/csr'],
        ['POST', `/certificates/${id}/request`],
      ]) {
        const r = await t.request(method, path, { key: denied.key, body: {} })
        assert.deepEqual(r.body, { status: 403, status_description: 'Access denied' }, `${method} ${path}`)
      }
      const order = { product_id: 1, duration: 1 }
      assert.deepEqual((await t.request('POST', '/certificates/order', { key: allowed.key, body: order })).body, {
        status: 403,
        status_description: 'Access denied',
      })
      const ordered = await t.request('POST', '/certificates/order', { key: denied.key, body: order })
      assert.equal(ordered.status, 200)
      assert.equal(typeof ordered.body.data.order_id, 'number')
    })

    it('shows an expired certificate as EXP and refuses a request once the paid period has ended', async () => {
      const id = await makeCertificatePackage(t, a)
      const issued = await makeCertificatePackage(t, a)
      assert.equal(
        (await request(issued, { csr: opensslCsr('expiring.example.com'), validation_method: 'http' })).status,
        200,
      )
      await t.ctx.jobs.drain()
      assert.equal((await get(issued)).body.data.certificate_status, 'ACT')
      clock.advance(400 * 24 * 3600_000)
      assert.equal((await get(issued)).body.data.certificate_status, 'EXP')
      const r = await request(id, { csr: opensslCsr('late.example.com'), validation_method: 'http' })
      assert.deepEqual(r.body, { status: 400, status_description: 'The period of this certificate package has ended' })
    })
  })
})

forEachDialect((dialect) => {
  describe(`certificates demo data (${dialect})`, () => {
    let t: TestApp
    before(async () => {
      t = await startTestApp(dialect, { env: { HOSTAPI_DEMO: '1' } })
    })
    after(() => t.close())

    it('seeds one issued certificate into the demo account', async () => {
      const key = t.server.demoKey
      assert.ok(key)
      const list = await t.request('GET', '/certificates', { key })
      assert.equal(list.status, 200)
      const issued = list.body.data.certificates.filter(
        (c: { certificate_status: string }) => c.certificate_status === 'ACT',
      )
      assert.equal(issued.length, 1)
      const c = (await t.request('GET', `/certificates/${issued[0].id}`, { key })).body.data
      assert.equal(c.requested, true)
      assert.match(
        opensslVerify((await t.ctx.drivers.ca.rootCertificate())!, c.intermediate_certificate, c.certificate),
        /OK$/,
      )
      assert.deepEqual(certificateNames(c.certificate), { cn: c.common_name, sans: c.domains })
    })
  })
})
