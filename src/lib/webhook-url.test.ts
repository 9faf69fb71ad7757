import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { ApiError } from '../errors.js'
import { embeddingForms, localhostName, privateV4 } from '../../test/helpers/addresses.js'
import { parseWebhookUrl, type WebhookUrlRules } from './webhook-url.js'

const strict: WebhookUrlRules = { allowHttp: false, allowPrivate: false }
const lenient: WebhookUrlRules = { allowHttp: true, allowPrivate: true }
const rules = fc.record({ allowHttp: fc.boolean(), allowPrivate: fc.boolean() })
// Hosts in loopback, private and link-local IPv4 ranges, written plain or in any IPv6 form that embeds them, and
// localhost names in any case with trailing dots.
const privateHost = fc.oneof(
  privateV4,
  fc.tuple(privateV4, fc.nat()).map(([a, i]) => {
    const forms = Object.values(embeddingForms(a))
    return `[${forms[i % forms.length]}]`
  }),
  localhostName,
  fc.constantFrom('[::1]', '[fd00::1]', '[fe80::1]', '[::127.0.0.1]', 'LOCALHOST.'),
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
