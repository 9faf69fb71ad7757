import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { batchEachTurn, batchPerTurn } from './turn-batch.js'

/** A fetch whose calls are recorded and answered by the test. */
function controlledFetch() {
  const calls: { keys: number[]; answer: (found: Map<number, string>) => void; fail: (err: Error) => void }[] = []
  const fetch = (keys: number[]) =>
    new Promise<Map<number, string>>((answer, fail) => {
      calls.push({ keys, answer, fail })
    })
  return { calls, fetch }
}

const turn = () => new Promise((resolve) => setImmediate(resolve))

describe('batchPerTurn', () => {
  it('answers the lookups of one turn with one call, made after the turn, with each key once', async () => {
    const { calls, fetch } = controlledFetch()
    const lookup = batchPerTurn(fetch, 'none')
    const answers = [lookup(1), lookup(2), lookup(1)]
    // A lookup made from a microtask of the same turn joins the batch too.
    answers.push(Promise.resolve().then(() => lookup(3)))
    await Promise.resolve()
    await Promise.resolve()
    assert.equal(calls.length, 0, 'nothing is sent while the turn lasts')
    await turn()
    assert.equal(calls.length, 1)
    assert.deepEqual(calls[0].keys, [1, 2, 3])
    calls[0].answer(
      new Map([
        [1, 'a'],
        [2, 'b'],
      ]),
    )
    assert.deepEqual(await Promise.all(answers), ['a', 'b', 'a', 'none'])
  })

  it('never lets a lookup join a call already made: it waits for a call made after it was asked', async () => {
    const { calls, fetch } = controlledFetch()
    const lookup = batchPerTurn(fetch, 'none')
    const early = lookup(1)
    await turn()
    assert.equal(calls.length, 1)
    // The data changes now, while the first call is on its way: a lookup asked after that sees the change.
    const late = lookup(1)
    await turn()
    assert.equal(calls.length, 2)
    calls[0].answer(new Map([[1, 'old']]))
    calls[1].answer(new Map([[1, 'new']]))
    assert.equal(await early, 'old')
    assert.equal(await late, 'new')
  })

  it('gives a failed call to every lookup of its batch, and the next batch is made afresh', async () => {
    const { calls, fetch } = controlledFetch()
    const lookup = batchPerTurn(fetch, 'none')
    const failed = [lookup(1), lookup(2)]
    await turn()
    calls[0].fail(new Error('connection lost'))
    for (const p of failed) await assert.rejects(p, /connection lost/)
    const next = lookup(1)
    await turn()
    calls[1].answer(new Map([[1, 'v']]))
    assert.equal(await next, 'v')
  })
})

describe('batchEachTurn', () => {
  it('runs the calls of one turn together, after the turn, in their order, and gives each its own outcome', async () => {
    const runs: number[][] = []
    const call = batchEachTurn(async (items: number[]) => {
      runs.push([...items])
      return items.map(
        (n): PromiseSettledResult<number> =>
          n < 0 ? { status: 'rejected', reason: new Error(`bad ${n}`) } : { status: 'fulfilled', value: n * 10 },
      )
    })
    const answers = Promise.allSettled([call(1), call(-2), Promise.resolve().then(() => call(3))])
    await Promise.resolve()
    assert.equal(runs.length, 0, 'nothing runs while the turn lasts')
    const settled = await answers
    assert.deepEqual(runs, [[1, -2, 3]])
    assert.deepEqual(settled[0], { status: 'fulfilled', value: 10 })
    assert.equal(settled[1].status === 'rejected' && (settled[1].reason as Error).message, 'bad -2')
    assert.deepEqual(settled[2], { status: 'fulfilled', value: 30 })
    // A later turn: a run of its own.
    assert.equal(await call(4), 40)
    assert.deepEqual(runs, [[1, -2, 3], [4]])
  })

  it('fails every call of the turn when the run fails', async () => {
    const call = batchEachTurn(async (): Promise<PromiseSettledResult<number>[]> => {
      throw new Error('down')
    })
    const settled = await Promise.allSettled([call(1), call(2)])
    assert.deepEqual(
      settled.map((s) => s.status),
      ['rejected', 'rejected'],
    )
  })
})

describe('batchEachTurn with lanes', () => {
  it('runs a lane one run at a time, the items that came meanwhile together, and never holds up another lane', async () => {
    const runs: { items: string[]; end: () => void }[] = []
    const call = batchEachTurn(
      (items: string[]) =>
        new Promise<PromiseSettledResult<string>[]>((resolve) => {
          runs.push({ items: [...items], end: () => resolve(items.map((i) => ({ status: 'fulfilled', value: i }))) })
        }),
      { laneOf: (item) => item[0] },
    )
    const first = [call('a1'), call('b1')]
    await turn()
    assert.deepEqual(
      runs.map((r) => r.items),
      [['a1', 'b1']],
    )
    // Lane a is busy: its items wait; lane c is not, and runs in the next turn.
    const waiting = [call('a2'), call('a3'), call('c1')]
    await turn()
    assert.deepEqual(
      runs.map((r) => r.items),
      [['a1', 'b1'], ['c1']],
    )
    runs[1].end()
    assert.equal(await waiting[2], 'c1')
    assert.equal(runs.length, 2, 'a2 and a3 still wait for the run of a1')
    runs[0].end()
    assert.deepEqual(await Promise.all(first), ['a1', 'b1'])
    await turn()
    assert.deepEqual(runs[2].items, ['a2', 'a3'], 'the waiting items of lane a go in one run, in their order')
    runs[2].end()
    assert.deepEqual(await Promise.all(waiting.slice(0, 2)), ['a2', 'a3'])
  })

  it('frees the lane when a run fails', async () => {
    let fail = true
    const call = batchEachTurn(
      async (items: number[]): Promise<PromiseSettledResult<number>[]> => {
        if (fail) throw new Error('down')
        return items.map((value) => ({ status: 'fulfilled', value }))
      },
      { laneOf: () => 'one' },
    )
    await assert.rejects(call(1), /down/)
    fail = false
    assert.equal(await call(2), 2)
  })
})
