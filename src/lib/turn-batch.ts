/**
 * Coalesces the lookups made within one event-loop turn into one call of `fetch` with every key asked for, made
 * once the turn is over (`setImmediate`), so the call starts after every lookup it answers was asked. A lookup
 * never joins a call already made: it waits for the next one. Keys `fetch` leaves out get `missing`.
 */
export function batchPerTurn<K, V>(fetch: (keys: K[]) => Promise<Map<K, V>>, missing: V): (key: K) => Promise<V> {
  let open: { keys: Set<K>; result: Promise<Map<K, V>> } | null = null
  return async (key) => {
    if (!open) {
      const keys = new Set<K>()
      const result = new Promise<Map<K, V>>((resolve, reject) => {
        setImmediate(() => {
          open = null
          try {
            fetch([...keys]).then(resolve, reject)
          } catch (err) {
            reject(err)
          }
        })
      })
      open = { keys, result }
    }
    open.keys.add(key)
    const found = await open.result
    return found.has(key) ? (found.get(key) as V) : missing
  }
}

/** A call waiting for its run: the item and how to answer it. */
interface Waiting<T, R> {
  item: T
  resolve: (value: R) => void
  reject: (reason: unknown) => void
}

/**
 * Coalesces the calls made within one event-loop turn into one call of `run` with every item, in the order they
 * came, made once the turn is over (`setImmediate`); `run` settles each item (its answers in the items' order), and
 * each caller gets its own item's outcome. A call never joins a run already started: it waits for the next one.
 *
 * With `laneOf`, an item whose lane has items in a run not ended yet waits for that run to end and goes in the run
 * after it: a lane's items go in one run at a time, each taking every item of the lane that came meanwhile (group
 * commit: fewer, larger runs under load), and a lane held up holds up only its own items, never another lane's.
 */
export function batchEachTurn<T, R>(
  run: (items: T[]) => Promise<PromiseSettledResult<R>[]>,
  opts: { laneOf?: (item: T) => string } = {},
): (item: T) => Promise<R> {
  const { laneOf } = opts
  let open: Waiting<T, R>[] | null = null
  // The lanes with items in a run not ended yet, and the items waiting for each.
  const busy = new Map<string, Waiting<T, R>[]>()

  const enqueue = (w: Waiting<T, R>) => {
    if (!open) {
      const batch: Waiting<T, R>[] = []
      open = batch
      setImmediate(() => {
        open = null
        start(batch)
      })
    }
    open.push(w)
  }

  const start = (batch: Waiting<T, R>[]) => {
    const lanes = laneOf ? new Set(batch.map((w) => laneOf(w.item))) : null
    if (lanes) for (const lane of lanes) busy.set(lane, [])
    let result: Promise<PromiseSettledResult<R>[]>
    try {
      result = run(batch.map((w) => w.item))
    } catch (err) {
      result = Promise.reject(err)
    }
    result
      .then(
        (outcomes) =>
          batch.forEach((w, i) => {
            const outcome = outcomes[i]
            if (outcome === undefined) w.reject(new Error('a batched call got no answer'))
            else if (outcome.status === 'rejected') w.reject(outcome.reason)
            else w.resolve(outcome.value)
          }),
        (err: unknown) => {
          for (const w of batch) w.reject(err)
        },
      )
      .finally(() => {
        if (!lanes) return
        for (const lane of lanes) {
          const waiting = busy.get(lane) ?? []
          busy.delete(lane)
          for (const w of waiting) enqueue(w)
        }
      })
  }

  return (item) =>
    new Promise<R>((resolve, reject) => {
      const w = { item, resolve, reject }
      const waiting = laneOf ? busy.get(laneOf(item)) : undefined
      if (waiting) waiting.push(w)
      else enqueue(w)
    })
}
