/**
 * `fn` with its answers kept per argument, at most `size` of them (all dropped when full): for pure work done on
 * every request with few distinct arguments, such as the parsing of a caller's address.
 */
export function memoized(fn: (arg: string) => string, size: number): (arg: string) => string {
  const kept = new Map<string, string>()
  return (arg) => {
    let value = kept.get(arg)
    if (value === undefined) {
      value = fn(arg)
      if (kept.size >= size) kept.clear()
      kept.set(arg, value)
    }
    return value
  }
}
