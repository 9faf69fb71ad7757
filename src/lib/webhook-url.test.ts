import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { ApiError } from '../errors.js'
import { parseWebhookUrl, type WebhookUrlRules } from './webhook-url.js'

const strict: WebhookUrlRules = { allowHttp: false, allowPrivate: false }
const lenient: WebhookUrlRules = { allowHttp: true, allowPrivate: true }
const rules = fc.record({ allowHttp: fc.boolean(), allowPrivate: fc.boolean() })
const byte = fc.integer({ min: 0, max: 255 })
// Hosts in loopback, private and link-local IPv4 ranges, written plain or as IPv4-mapped IPv6.
const privateV4 = fc
  .tuple(fc.constantFrom('10', '127', '192.168', '169.254', '172.16', '172.31'), byte, byte, byte)
  .map(([head, ...rest]) => [...head.split('.'), ...rest].slice(0, 4).join('.'))
const privateHost = fc.oneof(
  privateV4,
  privateV4.map((a) => `[::ffff:${a}]`),
  fc.constantFrom('localhost', 'hooks.localhost', '[::1]', '[fd00::1]', '[fe80::1]'),
)
const publicHttps = fc
  .webUrl({ validSchemes: ['https'], withQueryParameters: true, withFragments: true })
  .filter((u) => !new URL(u).hostname.endsWith('localhost'))

/** The reason of a refusal, or the stored form. */
function outcome(text: string, r: WebhookUrlRules): { stored: string } | { refused: string } {
  try {
    return { stored: parseWebhookUrl(text, r) }
  } catch (err) {
    assert.ok(err instanceof ApiError && err.status === 400, String(err))
    return { refused: err.message }
  }
}

describe('parseWebhookUrl', () => {
  it('takes any text to a stored form or a 400, and a stored form is stored again unchanged', () => {
    const text = fc.oneof(fc.string({ maxLength: 80 }), fc.webUrl({ withFragments: true }), publicHttps)
    fc.assert(
      fc.property(text, rules, (t, r) => {
        const o = outcome(t, r)
        if (!('stored' in o)) return
        const url = new URL(o.stored)
        assert.equal(url.hash, '')
        assert.equal(url.username + url.password, '')
        assert.ok(url.protocol === 'https:' || (r.allowHttp && url.protocol === 'http:'), o.stored)
        assert.equal(parseWebhookUrl(o.stored, r), o.stored)
      }),
    )
  })

  it('stores every https:// URL of a public name without its fragment', () => {
    fc.assert(
      fc.property(publicHttps, (u) => {
        const expected = new URL(u)
        expected.hash = ''
        assert.equal(parseWebhookUrl(u, strict), expected.toString())
      }),
    )
  })

  it('refuses http:// unless allowed', () => {
    fc.assert(
      fc.property(publicHttps, (u) => {
        const plain = `http://${u.slice('https://'.length)}`
        assert.deepEqual(outcome(plain, strict), { refused: 'Invalid url: use https://' })
        assert.ok('stored' in outcome(plain, { ...strict, allowHttp: true }))
      }),
    )
  })

  it('refuses loopback, private and link-local hosts unless allowed, and credentials always', () => {
    fc.assert(
      fc.property(privateHost, fc.webPath(), (host, path) => {
        const u = `https://${host}${path}`
        assert.deepEqual(outcome(u, strict), { refused: 'Invalid url: the host is not a public address' })
        assert.ok('stored' in outcome(u, lenient), u)
        assert.deepEqual(outcome(`https://user:pw@${host}${path}`, lenient), {
          refused: 'Invalid url: credentials in the URL are not allowed',
        })
      }),
    )
  })
})
