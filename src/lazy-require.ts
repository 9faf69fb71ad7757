import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)

/**
 * A CommonJS package loaded on the first call instead of at start, for large packages that only some
 * requests or settings need; `T` is its `typeof import(...)`.
 */
export function lazyRequire<T>(id: string): () => T {
  let loaded: T | undefined
  return () => (loaded ??= require(id) as T)
}
