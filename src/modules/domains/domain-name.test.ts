import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { addYears, parseDomainName } from './domain-name.js'
import { nextSerial } from './zone-serial.js'

describe('domain names', () => {
  it('accepts registrable names in any case, with a trailing dot, and IDN as punycode', () => {
    assert.equal(parseDomainName('Example.NL'), 'example.nl')
    assert.equal(parseDomainName(' example.com. '), 'example.com')
    assert.equal(parseDomainName('sub.example.co.uk'), 'sub.example.co.uk')
    assert.equal(parseDomainName('bücher.de'), 'xn--bcher-kva.de')
    assert.equal(parseDomainName('xn--bcher-kva.xn--p1ai'), 'xn--bcher-kva.xn--p1ai')
    assert.equal(parseDomainName('a-b.nl'), 'a-b.nl')
  })

  it('refuses what is not a registrable name', () => {
    for (const bad of ['', '.', 'nl', 'example', 'example..nl', '-a.nl', 'a-.nl', 'a_b.nl', '*.example.nl', 'example.n1', 'exa mple.nl',
      `${'a'.repeat(64)}.nl`, `${'a.'.repeat(127)}nl`, 'example.nl..']) {
      assert.equal(parseDomainName(bad), null, bad)
    }
  })

  it('adds years to a day, 29 February falling back to 28 February', () => {
    assert.equal(addYears('2026-03-01', 1), '2027-03-01')
    assert.equal(addYears('2028-02-29', 1), '2029-02-28')
    assert.equal(addYears('2028-02-29', 4), '2032-02-29')
    assert.equal(addYears('2026-12-31', 10), '2036-12-31')
  })
})

describe('zone serials', () => {
  it('uses the date form YYYYMMDDnn, and counts on within a day and past 99', () => {
    const day = new Date('2026-11-22T10:00:00Z')
    assert.equal(nextSerial(0, day), 2026112200)
    assert.equal(nextSerial(2026112200, day), 2026112201)
    assert.equal(nextSerial(2026112299, day), 2026112300)
    assert.equal(nextSerial(2026112005, day), 2026112200, 'a new day jumps to its own date')
    assert.equal(nextSerial(2030010100, day), 2030010101, 'a serial ahead of the clock still increases')
  })
})
