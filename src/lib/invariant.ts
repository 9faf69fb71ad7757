/**
 * A fact the code itself establishes did not hold: a map entry it put in place, a row it wrote in the same
 * transaction, a value it checked before. A bug, never a client's mistake (answered `500 Error` and logged).
 */
export class InvariantError extends Error {
  override name = 'InvariantError'
}

/** `value`, which the caller knows is there; an InvariantError naming `what` when it is null or undefined. */
export function present<T>(value: T | null | undefined, what: string): T {
  if (value === null || value === undefined) throw new InvariantError(`${what} is missing`)
  return value
}

/** The entry of `key`, which the caller knows `map` holds; an InvariantError naming `what` and the key when not. */
export function entryOf<K, V>(map: ReadonlyMap<K, V>, key: K, what: string): V {
  const value = map.get(key)
  if (value === undefined) throw new InvariantError(`${what} ${String(key)} is missing`)
  return value
}
