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
