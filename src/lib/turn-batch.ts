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

/**
 * Coalesces the calls made within one event-loop turn into one call of `run` with every item, in the order they
 * came, made once the turn is over (`setImmediate`); `run` settles each item (its answers in the items' order), and
 * each caller gets its own item's outcome. A call never joins a run already started: it waits for the next one.
 */
export function batchEachTurn<T, R>(run: (items: T[]) => Promise<PromiseSettledResult<R>[]>): (item: T) => Promise<R> {
  let open: { items: T[]; result: Promise<PromiseSettledResult<R>[]> } | null = null
  return async (item) => {
    if (!open) {
      const items: T[] = []
      const result = new Promise<PromiseSettledResult<R>[]>((resolve, reject) => {
        setImmediate(() => {
          open = null
          try {
            run(items).then(resolve, reject)
          } catch (err) {
            reject(err)
          }
        })
      })
      open = { items, result }
    }
    const index = open.items.push(item) - 1
    const outcome = (await open.result)[index]
    if (outcome === undefined) throw new Error('a batched call got no answer')
    if (outcome.status === 'rejected') throw outcome.reason
    return outcome.value
  }
}
