import type { Compilable, CompiledQuery, Kysely, Transaction } from 'kysely'
import { onPostgres } from './database.js'

/** A value a statement compiled once is run with. */
export type Scalar = string | number | boolean | null

/**
 * Stands for one of a statement's values while it is built: the compiled statement's parameters hold it where the
 * value goes. Computing with it in JavaScript would build a statement for one value only, so it refuses to become a
 * string or a number.
 */
class Value {
  constructor(readonly index: number) {}
  [Symbol.toPrimitive](): never {
    throw new Error(
      'a statement compiled once computed with one of its values in JavaScript: pass the result as a value',
    )
  }
}

/** Shapes kept per statement; a statement with more (a list of many lengths) is compiled at every run past them. */
const MAX_SHAPES = 64

/** A connection or transaction over the tables `T`. */
type Handle<T> = Kysely<T> | Transaction<T>

/** Builds a statement from its shape and its values: the shape decides the text, the values only fill it in. */
export type Build<T, S, V extends readonly Scalar[], R> = (db: Handle<T>, shape: S, values: V) => Compilable<R>

/**
 * A statement built and compiled by Kysely once per database kind, shape and number of values, then run with new
 * values: a read on the hot path spends no time building a node tree and compiling it to text at every request
 * (about a tenth of an uncached read's CPU), and sends the same text object each time (its hash is kept, for the
 * statement cache on SQLite and the named prepared statements on PostgreSQL).
 *
 * `build` receives the values as placeholders and must not compute with them (a placeholder throws when it is turned
 * into a string or a number); what decides the text (whether there is a search, how many tags) goes in `shape`, whose
 * JSON text is its key. `db` may be a transaction.
 */
export function compiledOnce<T, S, V extends readonly Scalar[], R>(build: Build<T, S, V, R>) {
  const compiled = new Map<string, CompiledQuery<R>>()
  const holes = new Map<number, Value[]>()
  const holesOf = (n: number) => {
    let h = holes.get(n)
    if (!h) {
      h = Array.from({ length: n }, (_, i) => new Value(i))
      holes.set(n, h)
    }
    return h
  }
  return async (db: Handle<T>, shape: S, values: V): Promise<R[]> => {
    const key = `${onPostgres(db) ? 'p' : 's'}${values.length}${shape === undefined ? '' : JSON.stringify(shape)}`
    let query = compiled.get(key)
    if (!query) {
      query = build(db, shape, holesOf(values.length) as unknown as V).compile()
      if (compiled.size < MAX_SHAPES) compiled.set(key, query)
    }
    const parameters = query.parameters.map((p) => (p instanceof Value ? values[p.index] : p))
    return (await db.executeQuery<R>({ ...query, parameters })).rows
  }
}
