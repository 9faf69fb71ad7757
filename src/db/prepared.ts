import type pg from 'pg'

/**
 * Named prepared statements for every repeated statement sent to PostgreSQL, so that the server parses and plans it
 * once per connection instead of on every execution. On a read of a cached plan, PostgreSQL spends less on parsing
 * and planning than on running it: a zone of 200 records read by a statement that builds its JSON took about 1 ms to
 * plan and 0.7 ms to run each time; named, it is planned on its first executions only (PostgreSQL keeps a generic
 * plan once it costs no more than the custom ones).
 *
 * Which statements: those sent with parameters (Kysely sends every compiled query as text and values; without
 * values a text may hold several statements, which a prepared statement cannot) outside a transaction, from the
 * second time the same text is seen (a text built once, such as a multi-row insert of one size, takes no name), up to
 * `limit` distinct texts per process; the rest run unnamed as before. A name stands for one text in this process and
 * is prepared on each connection the first time that connection runs it.
 *
 * A schema change (another instance's migration) can make a prepared statement's result type differ (`cached plan
 * must not change result type`, for a `select *` of a table that gained a column): the text then takes a new name,
 * and the statement, which had no effect, is sent once more under it. That is safe only outside a transaction, where
 * the failed statement ended nothing else; inside one (a migration altering a table it read, a service's write) every
 * statement runs unnamed, as before.
 */
export interface PreparedStatements {
  /** Wraps a pooled client's `query`, before any other wrapper sees it. */
  attach(client: pg.PoolClient | pg.Client): void
  /** Statements that could be named (with parameters, outside a transaction) sent unnamed so far, and named. */
  counts(): { unnamed: number; named: number }
}

/** The most distinct statement texts named per process; a connection holds a plan for each it has run. */
export const PREPARED_LIMIT = 400

/** Texts seen once are remembered up to this many, then forgotten together. */
const SEEN_LIMIT = 4000

const TRANSACTION_START = /^\s*(begin|start\s+transaction)\b/i
const TRANSACTION_END = /^\s*(commit|rollback|end|abort)\b/i

type Query = (...args: unknown[]) => unknown

export function preparedStatements(limit = PREPARED_LIMIT): PreparedStatements {
  const names = new Map<string, string>()
  const seen = new Set<string>()
  // Every name given out is new: a text prepared again after a schema change never shares a name with another text.
  let given = 0
  let unnamed = 0
  let named = 0

  const nameOf = (text: string): string | undefined => {
    const name = names.get(text)
    if (name || names.size >= limit) return name
    if (!seen.has(text)) {
      if (seen.size >= SEEN_LIMIT) seen.clear()
      seen.add(text)
      return undefined
    }
    seen.delete(text)
    const fresh = `hostapi_${++given}`
    names.set(text, fresh)
    return fresh
  }

  // The text's plan no longer fits the schema: it is prepared anew under a name no connection has used.
  const rename = (text: string, stale: string): string => {
    if (names.get(text) !== stale) return names.get(text) ?? stale
    const fresh = `hostapi_${++given}`
    names.set(text, fresh)
    return fresh
  }

  return {
    counts: () => ({ unnamed, named }),
    attach(client) {
      const query = client.query.bind(client) as Query
      let inTransaction = false
      client.query = ((...args: unknown[]) => {
        const [text, values, callback] = args
        if (typeof text === 'string') {
          if (TRANSACTION_START.test(text)) inTransaction = true
          else if (TRANSACTION_END.test(text)) inTransaction = false
        }
        if (
          inTransaction ||
          typeof text !== 'string' ||
          !Array.isArray(values) ||
          values.length === 0 ||
          callback !== undefined
        )
          return query(...args)
        const name = nameOf(text)
        if (!name) {
          unnamed++
          return query(text, values)
        }
        named++
        const run = (n: string) => query({ name: n, text, values }) as Promise<pg.QueryResult>
        return run(name).catch((err: unknown) => {
          if (!isStalePlan(err)) throw err
          return run(rename(text, name))
        })
      }) as typeof client.query
    },
  }
}

/** PostgreSQL's answer to a prepared statement whose result columns changed since it was planned. */
const isStalePlan = (err: unknown): boolean =>
  (err as { code?: string } | null)?.code === '0A000' &&
  /cached plan must not change result type/.test(String((err as Error).message))
