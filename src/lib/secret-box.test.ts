import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import fc from 'fast-check'
import { keyId, newSecretKeyText, parseSecretKey, SecretBox, SecretBoxError } from './secret-box.js'

describe('SecretBox', () => {
  const a = randomBytes(32)
  const b = randomBytes(32)

  it('seals into a v1 envelope naming the key, and opens it again in the same context only', () => {
    const box = new SecretBox(a)
    const sealed = box.seal('-----BEGIN PRIVATE KEY-----\nabc\n', 'ca.root_key')
    assert.match(sealed, new RegExp(`^v1:${keyId(a)}:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+$`))
    assert.ok(!sealed.includes('PRIVATE KEY'))
    assert.notEqual(box.seal('x', 'c'), box.seal('x', 'c'), 'a new IV every time')
    assert.equal(box.open(sealed, 'ca.root_key'), '-----BEGIN PRIVATE KEY-----\nabc\n')
    assert.throws(() => box.open(sealed, 'ca.intermediate_key'), SecretBoxError)
    assert.ok(SecretBox.isSealed(sealed) && box.isCurrent(sealed))
  })

  it('opens values of a previous key, names an unknown key, and refuses a changed value', () => {
    const old = new SecretBox(a)
    const sealed = old.seal('secret', 'ctx')
    const rotated = new SecretBox(b, [a])
    assert.equal(rotated.open(sealed, 'ctx'), 'secret')
    assert.ok(!rotated.isCurrent(sealed))
    assert.throws(
      () => new SecretBox(b).open(sealed, 'ctx'),
      new RegExp(`sealed with the secret key ${keyId(a)}, which is not configured`),
    )
    const parts = sealed.split(':')
    const ct = Buffer.from(parts[4], 'base64url')
    ct[0] ^= 1
    parts[4] = ct.toString('base64url')
    assert.throws(() => old.open(parts.join(':'), 'ctx'), /changed or damaged/)
    assert.throws(() => old.open('-----BEGIN PRIVATE KEY-----', 'ctx'), /not a sealed secret/)
  })

  it('reads keys as hex or base64 of 32 bytes and nothing else', () => {
    const text = newSecretKeyText()
    assert.equal(parseSecretKey(text)?.length, 32)
    assert.deepEqual(parseSecretKey(a.toString('hex')), a)
    assert.deepEqual(parseSecretKey(a.toString('base64url')), a)
    assert.deepEqual(parseSecretKey(` ${a.toString('base64')}\n`), a)
    for (const bad of [
      '',
      'short',
      randomBytes(16).toString('hex'),
      randomBytes(31).toString('base64'),
      randomBytes(33).toString('base64'),
    ]) {
      assert.equal(parseSecretKey(bad), null, bad)
    }
  })

  it('opening or parsing any text returns a result or throws SecretBoxError, never anything else', () => {
    const box = new SecretBox(a)
    const real = box.seal('x', 'ctx').split(':')
    const texts = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc
        .array(fc.oneof(fc.constantFrom(...real), fc.string({ maxLength: 30 })), { maxLength: 7 })
        .map((p) => p.join(':')),
    )
    fc.assert(
      fc.property(texts, (text) => {
        parseSecretKey(text)
        try {
          assert.equal(typeof box.open(text, 'ctx'), 'string')
        } catch (err) {
          assert.ok(err instanceof SecretBoxError, String(err))
        }
      }),
      { seed: 20261123, numRuns: 2000 },
    )
  })
})
