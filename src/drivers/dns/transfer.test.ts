import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import dnsPacket, { type Answer } from 'dns-packet'
import { QTYPE_AXFR, TransferAcl, questionType, serialNewer, transferMessages } from './transfer.js'

describe('zone transfer helpers', () => {
  it('TransferAcl: single addresses and ranges, IPv4-mapped IPv6 clients count as IPv4', () => {
    const acl = new TransferAcl([
      { address: '127.0.0.1', prefixLength: 32, notifyPort: 53 },
      { address: '198.51.100.0', prefixLength: 24, notifyPort: null },
      { address: '2001:db8::', prefixLength: 32, notifyPort: null },
    ])
    for (const ok of ['127.0.0.1', '::ffff:127.0.0.1', '198.51.100.200', '2001:db8:ffff::1'])
      assert.ok(acl.allows(ok), ok)
    for (const no of ['127.0.0.2', '198.51.101.1', '2001:db9::1', '::1', '', undefined, 'nonsense']) {
      assert.ok(!acl.allows(no), String(no))
    }
    assert.ok(!new TransferAcl([]).allows('127.0.0.1'))
  })

  it('serialNewer follows serial number arithmetic (RFC 1982)', () => {
    assert.ok(serialNewer(2, 1))
    assert.ok(!serialNewer(1, 1))
    assert.ok(!serialNewer(1, 2))
    assert.ok(serialNewer(1, 0xffffffff), 'wraps around')
    assert.ok(!serialNewer(0xffffffff, 1))
  })

  it('questionType reads the single question type; null for none, several or unreadable', () => {
    const q = dnsPacket.encode({ id: 1, type: 'query', questions: [{ name: 'example.nl', type: 'AXFR', class: 'IN' }] })
    assert.equal(questionType(q), QTYPE_AXFR)
    assert.equal(questionType(q.subarray(0, q.length - 3)), null)
    assert.equal(questionType(Buffer.alloc(12)), null)
    const two = dnsPacket.encode({
      id: 1,
      type: 'query',
      questions: [
        { name: 'a.nl', type: 'A' },
        { name: 'b.nl', type: 'A' },
      ],
    })
    assert.equal(questionType(two), null)
  })

  it('transferMessages keeps every message within the limit, the question in the first only, records in order', async () => {
    const question = { name: 'example.nl', type: 'AXFR' as const, class: 'IN' as const }
    const records: Answer[] = Array.from({ length: 500 }, (_, i) => ({
      name: `h${i}.example.nl`,
      type: 'TXT',
      ttl: 60,
      data: `record ${i} ${'x'.repeat(i % 50)}`,
    }))
    const messages = await transferMessages(9, question, records, 4000)
    assert.ok(messages.length > 5)
    const decoded = messages.map((m) => {
      assert.ok(m.length <= 4000, String(m.length))
      return dnsPacket.decode(m)
    })
    assert.equal(decoded[0]!.questions!.length, 1)
    assert.ok(decoded.slice(1).every((p) => p.questions!.length === 0 && p.id === 9))
    assert.deepEqual(
      decoded.flatMap((p) => p.answers!.map((a) => a.name)),
      records.map((r) => r.name),
    )
    assert.equal((await transferMessages(9, question, [], 4000)).length, 1)
  })
})
