import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { ConfigError, loadConfig } from '../src/config/config.js'

describe('account area configuration', () => {
  it('has working defaults: 21% VAT, 14 days to pay, EUR', () => {
    const c = loadConfig({})
    assert.equal(c.billing.vatPercent, 21)
    assert.equal(c.billing.dueDays, 14)
    assert.equal(c.billing.currency, 'EUR')
    assert.match(c.mail.from, /@/)
    assert.match(c.mail.supportAddress, /@/)
    assert.match(c.payments.baseUrl, /^https:\/\//)
  })

  it('reads the seller, VAT, payment term, mail addresses and payment URL', () => {
    const c = loadConfig({
      HOSTAPI_VAT_PERCENT: '9.5',
      HOSTAPI_INVOICE_DUE_DAYS: '30',
      HOSTAPI_SELLER_NAME: 'Hosting B.V.',
      HOSTAPI_SELLER_ADDRESS: 'Dam 1; 1012 JS Amsterdam ;',
      HOSTAPI_SELLER_VAT_NUMBER: 'NL000099998B57',
      HOSTAPI_SELLER_IBAN: 'NL91ABNA0417164300',
      HOSTAPI_MAIL_FROM: 'billing@hosting.example',
      HOSTAPI_SUPPORT_EMAIL: 'desk@hosting.example',
      HOSTAPI_PAYMENT_URL: 'https://pay.hosting.example/p',
    })
    assert.deepEqual(c.billing, {
      vatPercent: 9.5,
      dueDays: 30,
      currency: 'EUR',
      seller: {
        name: 'Hosting B.V.',
        address: ['Dam 1', '1012 JS Amsterdam'],
        vatNumber: 'NL000099998B57',
        iban: 'NL91ABNA0417164300',
      },
    })
    assert.deepEqual(c.mail, { from: 'billing@hosting.example', supportAddress: 'desk@hosting.example' })
    assert.equal(c.payments.baseUrl, 'https://pay.hosting.example/p')
  })

  it('lists every bad value at once', () => {
    assert.throws(
      () =>
        loadConfig({
          HOSTAPI_VAT_PERCENT: '121',
          HOSTAPI_INVOICE_DUE_DAYS: '-1',
          HOSTAPI_MAIL_FROM: 'nobody',
          HOSTAPI_SUPPORT_EMAIL: 'a b@c',
        }),
      (e: unknown) => {
        assert.ok(e instanceof ConfigError)
        const text = e.problems.join('\n')
        for (const name of [
          'HOSTAPI_VAT_PERCENT',
          'HOSTAPI_INVOICE_DUE_DAYS',
          'HOSTAPI_MAIL_FROM',
          'HOSTAPI_SUPPORT_EMAIL',
        ])
          assert.match(text, new RegExp(name))
        return true
      },
    )
    assert.throws(() => loadConfig({ HOSTAPI_VAT_PERCENT: '21.123' }), ConfigError)
    assert.throws(() => loadConfig({ HOSTAPI_VAT_PERCENT: 'abc' }), ConfigError)
    assert.throws(
      () => loadConfig({ HOSTAPI_PAYMENT_URL: 'pay.example.com/x' }),
      /HOSTAPI_PAYMENT_URL must be an http\(s\) URL/,
    )
  })
})
