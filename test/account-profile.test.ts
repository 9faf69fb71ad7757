import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'
import type { OutboxMailDriver } from '../src/drivers/mail/builtin.js'

const fullProfile = {
  firstname: 'Jan',
  lastname: 'Jansen',
  address: 'Stationsstraat',
  house_number: '12a',
  zipcode: '1234 ab',
  city: 'Amsterdam',
  country_code: 'nl',
  phone: '201234567',
  phone_country_code: '+31',
}

forEachDialect((dialect) => {
  describe(`account profile and payment methods (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    let outbox: OutboxMailDriver
    before(async () => {
      t = await startTestApp(dialect)
      a = await t.account('Jansen Hosting B.V.')
      outbox = t.ctx.drivers.mail as OutboxMailDriver
    })
    after(() => t.close())

    it('starts from the account and its main user', async () => {
      const r = await t.request('GET', '/account/profile/', { key: a.key })
      assert.equal(r.status, 200)
      const p = r.body.data
      assert.equal(p.company, 'Jansen Hosting B.V.')
      assert.equal(p.firstname, 'Owner')
      assert.match(p.email, /@example\.com$/)
      assert.equal(p.pending_email, null)
      assert.equal(p.account_type, 'business')
      assert.deepEqual(Object.keys(p).sort(), [
        'account_type',
        'address',
        'city',
        'company',
        'company_vat_number',
        'country_code',
        'email',
        'email_invoices',
        'firstname',
        'house_number',
        'lastname',
        'pending_email',
        'phone',
        'phone_country_code',
        'zipcode',
      ])
    })

    it('tells a private account from a business one in account_type', async () => {
      const iam = t.ctx.services.iam
      const held = await iam.createAccount({
        name: 'Piet Bakker',
        email: 'piet@example.com',
        firstname: 'Piet',
        lastname: 'Bakker',
      })
      const { key } = await iam.createKey(held.accountId, held.userId, { label: 'test' })
      assert.equal((await t.request('GET', '/account/profile/', { key })).body.data.account_type, 'private')
      const put = await t.request('PUT', '/account/profile/', {
        key,
        body: {
          ...fullProfile,
          firstname: 'Piet',
          lastname: 'Bakker',
          email: 'piet@example.com',
          company_vat_number: 'NL123456789B01',
        },
      })
      assert.equal(put.body.data.account_type, 'business', 'a VAT number makes it a business')
    })

    it('replaces the profile, normalising codes, and keeps optional fields when omitted', async () => {
      const current = (await t.request('GET', '/account/profile', { key: a.key })).body.data
      const put = await t.request('PUT', '/account/profile', {
        key: a.key,
        body: {
          ...fullProfile,
          email: current.email,
          email_invoices: 'facturen@example.nl',
          company_vat_number: 'nl 123456789b01',
        },
      })
      assert.equal(put.status, 200)
      assert.equal(put.body.status_description, 'Profile updated')
      assert.equal(put.body.data.country_code, 'NL')
      assert.equal(put.body.data.zipcode, '1234 AB')
      assert.equal(put.body.data.company_vat_number, 'NL123456789B01')
      assert.equal(put.body.data.email_invoices, 'facturen@example.nl')
      assert.equal(put.body.data.company, 'Jansen Hosting B.V.')

      // A client that sends back what it read (company and pending_email included) is accepted.
      const again = await t.request('PUT', '/account/profile', {
        key: a.key,
        body: { ...put.body.data, city: 'Utrecht', email_invoices: undefined, company_vat_number: undefined },
      })
      assert.equal(again.status, 200)
      assert.equal(again.body.data.city, 'Utrecht')
      assert.equal(again.body.data.email_invoices, 'facturen@example.nl')
      assert.equal(again.body.data.company_vat_number, 'NL123456789B01')
      assert.deepEqual((await t.request('GET', '/account/profile', { key: a.key })).body.data, again.body.data)
    })

    it('refuses a change of the read-only company, missing fields and bad values with clear texts', async () => {
      const email = (await t.request('GET', '/account/profile', { key: a.key })).body.data.email
      const company = await t.request('PUT', '/account/profile', {
        key: a.key,
        body: { ...fullProfile, email, company: 'Other B.V.' },
      })
      assert.deepEqual(company.body, {
        status: 400,
        status_description: 'The company name cannot be changed through the API; contact support',
      })
      const { city: _c, ...noCity } = fullProfile
      const missing = await t.request('PUT', '/account/profile', { key: a.key, body: { ...noCity, email } })
      assert.equal(missing.status, 400)
      assert.equal(missing.body.status_description, 'Missing city')
      for (const [field, value] of [
        ['country_code', 'NLD'],
        ['phone_country_code', '0031'],
        ['email', 'not-an-email'],
        ['email_invoices', 'x@'],
        ['company_vat_number', '123'],
      ]) {
        const r = await t.request('PUT', '/account/profile', {
          key: a.key,
          body: { ...fullProfile, email, [field]: value },
        })
        assert.equal(r.status, 400, field)
        assert.match(r.body.status_description, new RegExp(field), field)
      }
    })

    it('accepts the phone country code with or without + and an international phone, storing one form', async () => {
      const email = (await t.request('GET', '/account/profile', { key: a.key })).body.data.email
      const forms: Record<string, unknown>[] = [
        { phone: '612345678', phone_country_code: '+31' },
        { phone: '612345678', phone_country_code: '31' },
        { phone: '06 1234 5678', phone_country_code: '31' },
        { phone: '+31612345678' },
        { phone: '+31 6 1234 5678', phone_country_code: '+31' },
        { phone: '0031612345678' },
      ]
      for (const form of forms) {
        const { phone: _p, phone_country_code: _c, ...rest } = fullProfile
        const put = await t.request('PUT', '/account/profile/', { key: a.key, body: { ...rest, email, ...form } })
        assert.equal(put.status, 200, JSON.stringify(form))
        assert.equal(put.body.data.phone, '612345678', JSON.stringify(form))
        assert.equal(put.body.data.phone_country_code, '+31', JSON.stringify(form))
      }
      const stored = (await t.request('GET', '/account/profile/', { key: a.key })).body.data
      assert.equal(stored.phone, '612345678')
      assert.equal(stored.phone_country_code, '+31')

      const belgian = await t.request('PUT', '/account/profile/', {
        key: a.key,
        body: { ...fullProfile, email, phone: '+32470123456', phone_country_code: undefined },
      })
      assert.equal(belgian.body.data.phone, '470123456')
      assert.equal(belgian.body.data.phone_country_code, '+32')

      const clash = await t.request('PUT', '/account/profile/', {
        key: a.key,
        body: { ...fullProfile, email, phone: '+32470123456', phone_country_code: '31' },
      })
      assert.equal(clash.status, 400)
      assert.equal(
        clash.body.status_description,
        'Invalid phone: its country code +32 differs from phone_country_code +31',
      )
      const national = await t.request('PUT', '/account/profile/', {
        key: a.key,
        body: { ...fullProfile, email, phone: '0612345678', phone_country_code: undefined },
      })
      assert.equal(national.status, 400)
      assert.match(national.body.status_description, /^Missing phone_country_code/)
      const stillStored = (await t.request('GET', '/account/profile/', { key: a.key })).body.data
      assert.equal(stillStored.phone_country_code, '+32')
    })

    it('keeps a new e-mail address pending, mails a code to it, and switches once the code is confirmed', async () => {
      const before = (await t.request('GET', '/account/profile', { key: a.key })).body.data
      const put = await t.request('PUT', '/account/profile', {
        key: a.key,
        body: { ...fullProfile, email: 'new-address@example.org' },
      })
      assert.equal(put.status, 200)
      assert.equal(
        put.body.status_description,
        'Profile updated; a verification code was sent to the new e-mail address',
      )
      assert.equal(put.body.data.email, before.email)
      assert.equal(put.body.data.pending_email, 'new-address@example.org')

      assert.deepEqual(await outbox.list({ to: 'new-address@example.org' }), [], 'mail goes out through the job queue')
      await t.ctx.jobs.drain()
      const [mail] = await outbox.list({ to: 'new-address@example.org' })
      assert.equal(mail.kind, 'profile.verify_email')
      assert.equal(mail.account_id, a.accountId)
      const code = /\n {2}(\S+)\n/.exec(mail.text_body)![1]
      const [notice] = await outbox.list({ to: before.email })
      assert.equal(notice.kind, 'profile.email_change_requested')
      assert.match(notice.text_body, /new-address@example\.org/)
      assert.ok(!notice.text_body.includes(code), 'the old address never sees the code')

      const other = await t.account()
      const foreign = await t.request('POST', '/account/profile/confirm-email', {
        key: other.key,
        body: { token: code },
      })
      assert.deepEqual(foreign.body, { status: 400, status_description: 'Invalid or expired verification code' })
      const wrong = await t.request('POST', '/account/profile/confirm-email', {
        key: a.key,
        body: { token: 'x'.repeat(32) },
      })
      assert.equal(wrong.status, 400)

      const ok = await t.request('POST', '/account/profile/confirm-email', { key: a.key, body: { token: code } })
      assert.equal(ok.status, 200)
      assert.equal(ok.body.data.email, 'new-address@example.org')
      assert.equal(ok.body.data.pending_email, null)
      const reuse = await t.request('POST', '/account/profile/confirm-email', { key: a.key, body: { token: code } })
      assert.equal(reuse.status, 400)
    })

    it('lists payment methods with bank transfer as the default until one is chosen', async () => {
      const b = await t.account()
      const empty = await t.request('GET', '/account/paymethods/', { key: b.key })
      assert.deepEqual(empty.body.data, { default: 'bank_transfer', default_paymethod_id: '', paymethods: [] })

      const card = await t.ctx.services.paymethods.add(b.accountId, {
        type: 'creditcard',
        holder: 'J. Jansen',
        account: '4111111111114242',
        expires: '2029-04',
      })
      const debit = await t.ctx.services.paymethods.add(b.accountId, {
        type: 'directdebit',
        holder: 'Jansen B.V.',
        account: 'NL91ABNA0417164300',
      })
      const list = (await t.request('GET', '/account/paymethods', { key: b.key })).body.data
      assert.equal(list.default, 'bank_transfer')
      assert.deepEqual(
        list.paymethods.map((m: { id: string }) => m.id),
        [card, debit],
      )
      assert.equal(list.paymethods[0].type, 'creditcard')
      assert.equal(list.paymethods[0].description, 'Credit card •••• 4242')
      assert.equal(list.paymethods[0].expires, '2029-04')
      assert.ok(!JSON.stringify(list).includes('4111111111114242'), 'the full card number is never shown')

      const set = await t.request('PUT', '/account/paymethods/', { key: b.key, body: { default_paymethod_id: debit } })
      assert.equal(set.status, 200)
      assert.deepEqual(set.body.data, { default: 'directdebit', default_paymethod_id: debit })
      const after = (await t.request('GET', '/account/paymethods', { key: b.key })).body.data
      assert.equal(after.default_paymethod_id, debit)
      assert.deepEqual(
        after.paymethods.map((m: { is_default: boolean }) => m.is_default),
        [false, true],
      )

      // An integer id is accepted too; bank transfer switches back.
      const asNumber = await t.request('PUT', '/account/paymethods', {
        key: b.key,
        body: { default_paymethod_id: Number(card) },
      })
      assert.deepEqual(asNumber.body.data, { default: 'creditcard', default_paymethod_id: card })
      const bank = await t.request('PUT', '/account/paymethods', { key: b.key, body: { paymethod: 'bank_transfer' } })
      assert.deepEqual(bank.body, {
        status: 200,
        status_description: 'Request successful',
        data: { default: 'bank_transfer', default_paymethod_id: '' },
      })
    })

    it("refuses an unknown id, another account's method, both or neither choice, and other paymethod values", async () => {
      const b = await t.account()
      const c = await t.account()
      const foreign = await t.ctx.services.paymethods.add(c.accountId, {
        type: 'paypal',
        holder: 'C',
        account: 'c@example.com',
      })
      for (const id of ['999999', foreign, 'abc']) {
        const r = await t.request('PUT', '/account/paymethods', { key: b.key, body: { default_paymethod_id: id } })
        assert.deepEqual(r.body, { status: 400, status_description: `Unknown payment method: ${id}` })
      }
      const choice =
        'Set either default_paymethod_id (an id from the list of payment methods) or paymethod: bank_transfer'
      assert.deepEqual((await t.request('PUT', '/account/paymethods', { key: b.key, body: {} })).body, {
        status: 400,
        status_description: choice,
      })
      assert.deepEqual(
        (
          await t.request('PUT', '/account/paymethods', {
            key: b.key,
            body: { default_paymethod_id: foreign, paymethod: 'bank_transfer' },
          })
        ).body,
        { status: 400, status_description: choice },
      )
      const other = await t.request('PUT', '/account/paymethods', { key: b.key, body: { paymethod: 'cash' } })
      assert.equal(other.status, 400)
      assert.match(other.body.status_description, /paymethod/)
      assert.equal((await t.request('GET', '/account/paymethods', { key: b.key })).body.data.default, 'bank_transfer')
    })

    it('stores the first profile once when several changes race', async () => {
      const c = await t.account('Race B.V.')
      const email = (await t.request('GET', '/account/profile', { key: c.key })).body.data.email
      const pm = await t.ctx.services.paymethods.add(c.accountId, {
        type: 'creditcard',
        holder: 'R',
        account: '4111111111111111',
      })
      const answers = await Promise.all([
        ...['Amsterdam', 'Utrecht', 'Delft', 'Leiden'].map((city) =>
          t.request('PUT', '/account/profile', { key: c.key, body: { ...fullProfile, city, email } }),
        ),
        t.request('PUT', '/account/paymethods', { key: c.key, body: { default_paymethod_id: pm } }),
      ])
      assert.deepEqual(
        answers.map((r) => r.status),
        [200, 200, 200, 200, 200],
      )
      const rows = await t.ctx.db
        .selectFrom('account_profiles')
        .select('city')
        .where('account_id', '=', c.accountId)
        .execute()
      assert.equal(rows.length, 1)
      assert.equal((await t.request('GET', '/account/paymethods', { key: c.key })).body.data.default_paymethod_id, pm)
    })

    it('needs account-profile and account-paymethods respectively', async () => {
      const prof = await t.subUser(a, { 'account-profile': true })
      assert.equal((await t.request('GET', '/account/profile', { key: prof.key })).status, 200)
      assert.equal((await t.request('GET', '/account/paymethods', { key: prof.key })).status, 403)
      const pay = await t.subUser(a, { 'account-paymethods': true })
      assert.equal((await t.request('GET', '/account/paymethods', { key: pay.key })).status, 200)
      assert.deepEqual((await t.request('PUT', '/account/profile', { key: pay.key, body: fullProfile })).body, {
        status: 403,
        status_description: 'Access denied',
      })
    })
  })
})
