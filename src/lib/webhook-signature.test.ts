import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { Webhook } from 'standardwebhooks'
import { newWebhookSecret, signatureHeader } from './webhook-signature.js'

describe('webhook signatures', () => {
  it('verify with the standardwebhooks library, under either secret during a rotation', () => {
    const [oldSecret, newSecret] = [newWebhookSecret(), newWebhookSecret()]
    assert.match(newSecret, /^whsec_[A-Za-z0-9+/]{43}=$/)
    const body = JSON.stringify({ type: 'dns.zone.changed', timestamp: '2026-01-01T00:00:00.000Z', data: {} })
    const ts = Math.floor(Date.now() / 1000)
    const headers = {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(ts),
      'webhook-signature': signatureHeader([newSecret, oldSecret], 'msg_1', ts, body),
    }
    for (const s of [oldSecret, newSecret]) assert.deepEqual(new Webhook(s).verify(body, headers), JSON.parse(body))
    assert.throws(() => new Webhook(newWebhookSecret()).verify(body, headers))
    assert.throws(() => new Webhook(newSecret).verify(`${body} `, headers))
  })

  it('verify with the standardwebhooks library for any id and JSON body, and only for that body', () => {
    const id = fc.stringMatching(/^msg_[A-Za-z0-9_-]{1,40}$/)
    fc.assert(
      fc.property(id, fc.jsonValue(), (msgId, value) => {
        const secret = newWebhookSecret()
        const body = JSON.stringify(value)
        const ts = Math.floor(Date.now() / 1000)
        const headers = {
          'webhook-id': msgId,
          'webhook-timestamp': String(ts),
          'webhook-signature': signatureHeader([secret], msgId, ts, body),
        }
        assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body))
        assert.throws(() => new Webhook(secret).verify(`${body} `, headers))
      }),
      { numRuns: 50 },
    )
  })
})
