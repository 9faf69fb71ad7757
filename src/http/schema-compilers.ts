import AjvCompiler from '@fastify/ajv-compiler'
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import type { FastifyServerOptions } from 'fastify'
import { MAX_ID } from '../db/ids.js'

type Validate = ((data: unknown, dataCxt?: unknown) => unknown) & { errors?: unknown; schemaEnv?: unknown }
type Serialize = (doc: unknown) => string
type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>

/** Compiles every validator and serializer not compiled yet; startup never does, tests do. */
export type CompileAll = () => void

/**
 * The first value of `data` no API input may hold, as an Ajv error, or null:
 * - a non-finite number: Ajv coerces the strings `Infinity`, `-Infinity` and `1e999` (in a query, a path
 *   or a JSON body) to numbers and then skips `minimum`/`maximum` for them;
 * - a whole number beyond ±MAX_ID, anywhere: every whole number the API stores or looks up is a 32-bit `integer`
 *   column, and PostgreSQL refuses to store or compare a larger one (the customer would see a 500).
 */
function refused(data: unknown, at: string, depth = 0): { at: string; message: string } | null {
  if (typeof data === 'number') {
    if (!Number.isFinite(data)) return { at, message: 'must be a finite number' }
    if (Number.isInteger(data) && data > MAX_ID) return { at, message: `must be <= ${MAX_ID}` }
    return Number.isInteger(data) && data < -MAX_ID ? { at, message: `must be >= ${-MAX_ID}` } : null
  }
  if (typeof data !== 'object' || data === null || depth > 64) return null
  for (const [k, v] of Object.entries(data)) {
    // A page no list can reach is answered by the list itself, with the specification's `Page out of range`.
    if (depth === 0 && k === 'page' && typeof v === 'number' && Number.isFinite(v)) continue
    const found = refused(v, `${at}/${k}`, depth + 1)
    if (found !== null) return found
  }
  return null
}

/**
 * Fastify's own validator (Ajv, with Fastify's options and the shared schemas) and serializer
 * (fast-json-stringify) compilers, each route schema compiled on its first use instead of at `ready`:
 * hundreds of routes cost a start no compile time, a route's first request pays for its own.
 * A validator reads exactly like Ajv's: `.errors` and `.schemaEnv` are those of the compiled function;
 * it also refuses what no API input may hold (see refused): a non-finite number, a whole number beyond ±MAX_ID.
 * (NUL is refused at the door, by the transport plugin.)
 * Fastify treats compilers given here as custom, so it compiles header schemas as written:
 * their property names must be lower-case.
 */
export function lazySchemaCompilers(): { compilersFactory: CompilersFactory; compileAll: CompileAll } {
  const pending = new Set<() => unknown>()
  const validatorPool = AjvCompiler()
  const serializerFactory = SerializerSelector()

  /** `compile` runs once, on the first call of `get`. */
  function once<T>(compile: () => T): () => T {
    let done: T | undefined
    const get = () => {
      if (done === undefined) {
        done = compile()
        pending.delete(get)
      }
      return done
    }
    pending.add(get)
    return get
  }

  const buildValidator = ((
    externalSchemas: Parameters<typeof validatorPool>[0],
    options: Parameters<typeof validatorPool>[1],
  ) => {
    const compiler = once(() => validatorPool(externalSchemas, options))
    return (route: Parameters<ReturnType<typeof validatorPool>>[0]) => {
      const compiled = once(() => compiler()(route) as Validate)
      let own: unknown[] | null = null
      const validate = ((data: unknown, dataCxt?: unknown) => {
        own = null
        const valid = compiled()(data, dataCxt)
        if (valid !== true) return valid
        const found = refused(data, '')
        if (found === null) return true
        own = [{ instancePath: found.at, schemaPath: '', keyword: 'type', params: {}, message: found.message }]
        return false
      }) as Validate
      Object.defineProperties(validate, {
        errors: { get: () => own ?? compiled().errors },
        schemaEnv: { get: () => compiled().schemaEnv },
      })
      return validate
    }
  }) as CompilersFactory['buildValidator']

  const buildSerializer = ((externalSchemas: unknown, options: Parameters<typeof serializerFactory>[1]) => {
    const compiler = once(() => serializerFactory(externalSchemas, options))
    return (route: Parameters<ReturnType<typeof serializerFactory>>[0]) => {
      const compiled = once((): Serialize => compiler()(route))
      return (doc: unknown) => compiled()(doc)
    }
  }) as CompilersFactory['buildSerializer']

  const compileAll = () => {
    // Compilers first (they are added first), then what they compile; compiling adds nothing new.
    for (const get of [...pending]) get()
  }
  return { compilersFactory: { buildValidator, buildSerializer }, compileAll }
}
