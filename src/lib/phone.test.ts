import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { callingCodeOf, normalisePhone } from './phone.js'

describe('normalisePhone', () => {
  it('stores one form for the national and international ways of writing a number', () => {
    const stored = { phone: '612345678', phone_country_code: '+31' }
    assert.deepEqual(normalisePhone('0612345678', '+31'), stored)
    assert.deepEqual(normalisePhone('06-1234 5678', '31'), stored)
    assert.deepEqual(normalisePhone('+31 (0)6 1234 5678', undefined), stored)
    assert.deepEqual(normalisePhone('0031612345678', '31'), stored)
    assert.deepEqual(normalisePhone('+12025550123', undefined), { phone: '2025550123', phone_country_code: '+1' })
    assert.deepEqual(normalisePhone('+35312345678', undefined), { phone: '12345678', phone_country_code: '+353' })
  })

  it('keeps the leading 0 where the country dials it internationally', () => {
    assert.deepEqual(normalisePhone('+390612345678', undefined), { phone: '0612345678', phone_country_code: '+39' })
  })

  it('names the field that is wrong', () => {
    assert.deepEqual(normalisePhone('0612345678', undefined), { missing: 'phone_country_code' })
    const clash = normalisePhone('+32470123456', '31')
    assert.equal('field' in clash && clash.field, 'phone')
    assert.deepEqual(normalisePhone('12', '+31'), {
      field: 'phone',
      problem: 'must have 4 to 15 digits with the country code',
    })
  })

  it('splits calling codes of one, two and three digits', () => {
    assert.deepEqual(['1202', '7495', '3161', '3531', '2127'].map(callingCodeOf), ['1', '7', '31', '353', '212'])
  })

  it('takes any text to a stored form or a named problem, and a stored form is stored again unchanged', () => {
    const phoneText = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 60 }),
      fc.stringMatching(/^(\+|00)?[0-9 ().-]{0,20}$/),
      fc.stringMatching(/^[0 ]{0,4}[1-9][0-9]{3,10}$/),
    )
    const codeText = fc.option(fc.oneof(fc.string({ maxLength: 6 }), fc.stringMatching(/^\+?[0-9]{1,4}$/)), {
      nil: undefined,
    })
    fc.assert(
      fc.property(phoneText, codeText, (phone, code) => {
        const r = normalisePhone(phone, code)
        if ('phone' in r) {
          assert.match(r.phone, /^[0-9]{4,14}$/)
          assert.match(r.phone_country_code, /^\+[1-9][0-9]{0,3}$/)
          assert.deepEqual(normalisePhone(r.phone, r.phone_country_code), r)
        } else if ('field' in r) {
          assert.ok(['phone', 'phone_country_code'].includes(r.field) && r.problem.length > 0)
        } else {
          assert.equal(r.missing, 'phone_country_code')
        }
      }),
      { seed: 20261124, numRuns: 2000 },
    )
  })
})
