import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { domainToASCII, domainToUnicode } from 'node:url'
import fc from 'fast-check'
import { ApiError } from '../errors.js'
import { addYears, DomainNames, parseDomainName } from './domain-name.js'
import { nextSerial } from './dns/zone-serial.js'

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
    for (const bad of [
      '',
      '.',
      'nl',
      'example',
      'example..nl',
      '-a.nl',
      'a-.nl',
      'a_b.nl',
      '*.example.nl',
      'example.n1',
      'exa mple.nl',
      `${'a'.repeat(64)}.nl`,
      `${'a.'.repeat(127)}nl`,
      'example.nl..',
    ]) {
      assert.equal(parseDomainName(bad), null, bad)
    }
  })

  it('refuses broken punycode and hostile Unicode, and maps U-labels to A-labels', () => {
    for (const bad of [
      'xn--.nl',
      'xn--a.nl',
      'xn---.nl',
      'xn--abc.nl',
      'xn--aaa-.nl',
      'xn--ls8h.nl',
      '\u{1F4A9}.nl',
      '\u2603.nl',
      'a\u200db.nl',
      'a\u202eb.nl',
      '\ud800.nl',
      'exa\u0000mple.nl',
      'a%2eb.nl',
      'b\u00fccher_.de',
      'b\u00fccher%.de',
      'example.xn--',
      '\u0301a.nl',
    ]) {
      assert.equal(parseDomainName(bad), null, JSON.stringify(bad))
    }
    assert.equal(parseDomainName('XN--BCHER-KVA.DE'), 'xn--bcher-kva.de')
    assert.equal(
      parseDomainName('\uff45\uff58\uff41\uff4d\uff50\uff4c\uff45\uff0e\uff4e\uff4c'),
      'example.nl',
      'full-width letters and dot map (UTS #46)',
    )
    assert.equal(parseDomainName('stra\u00dfe.de'), 'xn--strae-oqa.de')
    assert.equal(parseDomainName(`${'a'.repeat(1_000_000)}.nl`), null)
    assert.equal(parseDomainName(`${'\u00fc'.repeat(1_000_000)}.nl`), null)
    assert.equal(
      parseDomainName(`${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(58)}.nl`)?.length,
      253,
    )
    assert.equal(
      parseDomainName(`${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(59)}.nl`),
      null,
      '254 characters',
    )
  })

  it("knows registrable names: one label below an ICANN public suffix or an operator's private suffix", () => {
    const names = new DomainNames()
    for (const [raw, want] of [
      ['demo-shop.nl', 'demo-shop.nl'],
      ['Example.CO.UK.', 'example.co.uk'],
      ['b\u00fccher.de', 'xn--bcher-kva.de'],
      ['github.io', 'github.io'],
      ['www.ck', 'www.ck'],
      ['foo.test', 'foo.test'],
      ['mail.demo-shop.nl', null],
      ['co.uk', null],
      ['a.b.example.com', null],
      ['x.github.io', null],
      ['foo.ck', null],
      ['ab--cd.nl', null],
      ['nl', null],
    ] as const)
      assert.equal(names.registrable(raw), want, raw)
    assert.equal(names.registrableDomainOf('_acme-challenge.www.example.co.uk'), 'example.co.uk')
    assert.equal(names.registrableDomainOf('co.uk'), null)
    const own = new DomainNames(['Hosted.NL', '.sites.example.com.'])
    assert.equal(own.registrable('shop.hosted.nl'), 'shop.hosted.nl')
    assert.equal(own.registrable('hosted.nl'), null)
    assert.equal(own.registrable('www.shop.hosted.nl'), null)
    assert.equal(own.registrable('a.sites.example.com'), 'a.sites.example.com')
    assert.equal(own.registrableDomainOf('mail.shop.hosted.nl'), 'shop.hosted.nl')
    assert.equal(own.registrable('demo-shop.nl'), 'demo-shop.nl')
  })

  it('adds years to a day, 29 February falling back to 28 February', () => {
    assert.equal(addYears('2026-03-01', 1), '2027-03-01')
    assert.equal(addYears('2028-02-29', 1), '2029-02-28')
    assert.equal(addYears('2028-02-29', 4), '2032-02-29')
    assert.equal(addYears('2026-12-31', 10), '2036-12-31')
  })
})

/** Calls `f`: it must return, or throw an ApiError; anything else fails the property. */
function returnsOrApiError<T>(f: () => T): T | ApiError {
  try {
    return f()
  } catch (err) {
    assert.ok(err instanceof ApiError, `threw ${String(err)}`)
    return err
  }
}

const STORED = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/
const LDH = 'abcdefghijklmnopqrstuvwxyz0123456789-'.split('')
const label = fc
  .string({ unit: fc.constantFrom(...LDH), minLength: 1, maxLength: 63 })
  .filter((l) => !l.startsWith('-') && !l.endsWith('-') && l.slice(2, 4) !== '--')
const suffix = fc.constantFrom('nl', 'com', 'co.uk', 'de', 'xn--p1ai', 'amsterdam', 'io')
/** Text that looks like a name often: labels, dots, hyphens, `xn--`, NUL, percent signs, any Unicode. */
const nameLike = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        '.',
        '-',
        'xn--',
        '\u0000',
        '%2e',
        '\u3002',
        '\uff0e',
        '\u200d',
        '\u202e',
        '\ud800',
        'ß',
        'ü',
        '\u0301',
        '\u{1F4A9}',
        'XN--',
        '..',
      ),
      label,
      fc.string({ unit: 'binary', maxLength: 8 }),
      fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 4 }),
    ),
    { maxLength: 12 },
  )
  .map((parts) => parts.join(''))
const runs = { seed: 20261123, numRuns: 2000 }

describe('domain names, property-based', () => {
  const names = new DomainNames(['hosted.nl'])

  it('any string: parse returns null or a stored-form name that parses to itself, never throws', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 300 }),
          nameLike,
          fc.string({ unit: 'grapheme', maxLength: 80 }),
        ),
        (raw) => {
          const out = returnsOrApiError(() => parseDomainName(raw))
          if (out instanceof ApiError || out === null) return
          assert.match(out, STORED)
          assert.equal(parseDomainName(out), out)
          for (const l of out.split('.')) if (l.startsWith('xn--')) assert.ok(domainToASCII(l) === l)
        },
      ),
      runs,
    )
  })

  it('any string: registrable returns null or a name one label below its suffix, never throws', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 300 }), nameLike), (raw) => {
        const out = returnsOrApiError(() => names.registrable(raw))
        if (out instanceof ApiError || out === null) return
        assert.match(out, STORED)
        assert.equal(names.registrable(out), out)
        assert.equal(names.registrableDomainOf(out), out)
        const suffixOf = names.publicSuffixOf(out)!
        assert.equal(out, `${out.split('.')[0]}.${suffixOf}`)
      }),
      runs,
    )
  })

  it('huge input of any kind is refused', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', minLength: 1, maxLength: 4 }),
        fc.integer({ min: 300, max: 200_000 }),
        (chunk, n) => {
          const raw = chunk.repeat(Math.ceil(n / chunk.length))
          const out = returnsOrApiError(() => parseDomainName(raw))
          assert.ok(out === null || (typeof out === 'string' && out.length <= 253))
          // At least 75 repeats: too many labels, or one label of more than 63 characters, or nothing at all.
          assert.equal(
            returnsOrApiError(() => names.registrable(`${raw}.nl`)),
            null,
          )
        },
      ),
      { seed: 20261123, numRuns: 100 },
    )
  })

  it('generated registrable names round-trip, in any case and with a trailing dot; names below them are not registrable', () => {
    fc.assert(
      fc.property(label, suffix, label, (l, sfx, sub) => {
        const name = `${l}.${sfx}`
        fc.pre(name.length <= 253)
        assert.equal(parseDomainName(name), name)
        assert.equal(names.registrable(name), name)
        assert.equal(names.registrable(` ${name.toUpperCase()}. `), name)
        const below = `${sub}.${name}`
        if (below.length <= 253) {
          assert.equal(names.registrable(below), null)
          assert.equal(names.registrableDomainOf(below), name)
        }
        assert.equal(names.registrable(sfx), null)
      }),
      runs,
    )
  })

  it('generated U-labels are stored as their A-label, which round-trips', () => {
    const unicodeLabel = fc.string({
      unit: fc.constantFrom(...'abcdeéèüöäßçñøåłżšžřőűαβγδжшщ中文한국'.split('')),
      minLength: 1,
      maxLength: 20,
    })
    fc.assert(
      fc.property(unicodeLabel, suffix, (u, sfx) => {
        const out = names.registrable(`${u}.${sfx}`)
        fc.pre(out !== null)
        assert.match(out!, STORED)
        assert.equal(names.registrable(out!), out)
        assert.equal(out, domainToASCII(`${u}.${sfx}`))
      }),
      runs,
    )
  })

  it('an xn-- label is valid only as the exact encoding of a U-label of letters, marks and digits', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...LDH), minLength: 0, maxLength: 20 }), (tail) => {
        const out = parseDomainName(`xn--${tail}.nl`)
        if (out === null) return
        const l = out.split('.')[0]!
        assert.equal(l, `xn--${tail}`)
        assert.equal(domainToASCII(domainToUnicode(l)), l)
        assert.match(domainToUnicode(l), /[^\x00-\x7f]/)
      }),
      runs,
    )
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
