import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { FaultInjector, WORK_KINDS, type WorkKind, workFaults } from './faults.js'

describe('fault injection into asynchronous work', () => {
  it('reads the account only while a fault of the work kind exists, and counts each firing', async () => {
    const faults = new FaultInjector()
    const looked: number[] = []
    const fired: WorkKind[] = []
    const check = workFaults(
      faults,
      async (accountId) => {
        looked.push(accountId)
        return 100_000 + accountId
      },
      (work) => fired.push(work),
    )
    faults.add({ operation: 'whoami', status: 503 })
    assert.equal(await check('vps.task', 1, { vps: '9' }), null)
    assert.deepEqual(looked, [], 'no lookup without a fault of the kind')

    faults.add({ work: 'vps.task', customer_number: 100_002, count: 1 })
    assert.equal(await check('vps.task', 1, { vps: '9' }), null, 'another account')
    assert.equal(await check('ca.issue', 2, {}), null, 'another kind')
    const hit = await check('vps.task', 2, { vps: '9' })
    assert.equal(hit?.work, 'vps.task')
    assert.deepEqual(fired, ['vps.task'])
    assert.equal(await check('vps.task', 2, { vps: '9' }), null, 'used up')
    assert.deepEqual(looked, [1, 2])
  })

  it('keeps operation faults and work faults apart, and matches params without regard to case', () => {
    const faults = new FaultInjector()
    faults.add({ operation: 'orderDomain', status: 503 })
    faults.add({ work: 'registry.register', params: { domain: 'Example.NL' } })
    const call = { customerNumber: null, keyPrefix: null }
    assert.equal(faults.draw({ ...call, work: 'registry.register', params: { domain: 'other.nl' } }), null)
    assert.equal(
      faults.draw({ ...call, work: 'registry.register', params: { domain: 'example.nl' } })?.work,
      'registry.register',
    )
    assert.equal(faults.draw({ ...call, operation: 'orderDomain', params: {} })?.operation, 'orderDomain')
    assert.equal(faults.draw({ ...call, operation: 'registry.register', params: { domain: 'example.nl' } }), null)
    for (const work of Object.keys(WORK_KINDS) as WorkKind[])
      if (work !== 'registry.register') assert.equal(faults.draw({ ...call, work, params: {} }), null, work)
  })
})
