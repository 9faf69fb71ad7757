import { describe, it, after, before } from 'node:test'
import assert from 'node:assert/strict'
import AjvCompiler from '@fastify/ajv-compiler'
import { lazySchemaCompilers } from './schema-compilers.js'
import { startTestApp, type TestApp } from '../../test/helpers/app.js'

const schema = {
  type: 'object',
  properties: { n: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } },
  required: ['n'],
  additionalProperties: false,
}
const route = { schema, method: 'POST', url: '/x', httpPart: 'body' }
// What Fastify hands the validator builder when no ajv option is set.
const ajvOptions = { customOptions: {}, plugins: [] }

describe('lazy schema compilers', () => {
  it('validate, coerce and report errors exactly as Fastify’s own Ajv compiler', () => {
    const lazy = lazySchemaCompilers().compilersFactory.buildValidator!({}, ajvOptions as never)(route as never) as (
      d: unknown,
    ) => boolean
    const eager = AjvCompiler()({}, ajvOptions as never)(route as never) as unknown as ((d: unknown) => boolean) & {
      errors: unknown
    }
    for (const data of [{ n: '7', tags: 'a', extra: 1 }, { tags: [] }, { n: 'x' }, 'text']) {
      const a = structuredClone(data)
      const b = structuredClone(data)
      assert.equal(lazy(a), eager(b))
      assert.deepEqual((lazy as unknown as { errors: unknown }).errors, eager.errors)
      assert.deepEqual(a, b)
    }
  })

  it('refuse a non-finite number that Ajv lets through (a coerced "Infinity", JSON\'s 1e999), naming where it is', () => {
    const bounded = {
      type: 'object',
      properties: {
        n: { type: 'integer', minimum: 1, maximum: 100 },
        list: { type: 'array', items: { type: 'number' } },
      },
    }
    const build = (httpPart: string) =>
      lazySchemaCompilers().compilersFactory.buildValidator!(
        {},
        ajvOptions as never,
      )({ ...route, schema: bounded, httpPart } as never) as ((d: unknown) => boolean) & {
        errors: { instancePath: string; message: string }[] | null
      }
    const eager = AjvCompiler()({}, ajvOptions as never)({ ...route, schema: bounded } as never) as unknown as (
      d: unknown,
    ) => boolean
    assert.equal(eager({ n: 'Infinity' }), true, 'Ajv itself accepts it (if this fails, Ajv fixed it)')
    const query = build('querystring')
    for (const n of ['Infinity', '-Infinity', '1e999']) {
      assert.equal(query({ n }), false, n)
      assert.deepEqual(
        query.errors?.map((e) => [e.instancePath, e.message]),
        [['/n', 'must be a finite number']],
      )
    }
    const body = build('body')
    assert.equal(body(JSON.parse('{"list":[1,1e999]}')), false)
    assert.equal(body.errors?.[0].instancePath, '/list/1')
    assert.equal(body({ n: 5, list: [1.5] }), true)
    assert.equal(body.errors, null)
  })

  it('compile nothing until a schema is used, and everything on compileAll', () => {
    const { compilersFactory, compileAll } = lazySchemaCompilers()
    let compiled = 0
    const options = {
      ...ajvOptions,
      onCreate: (ajv: { compile: (s: unknown) => unknown }) => {
        const compile = ajv.compile.bind(ajv)
        ajv.compile = (s) => {
          compiled++
          return compile(s)
        }
      },
    }
    const build = compilersFactory.buildValidator!({}, options as never)
    build(route as never)
    build({ ...route, httpPart: 'querystring' } as never)
    assert.equal(compiled, 0)
    compileAll()
    assert.equal(compiled, 2)
  })
})

describe('the app’s schemas', () => {
  let t: TestApp
  before(async () => {
    t = await startTestApp('sqlite')
  })
  after(() => t.close())

  it('every route’s validators and serializers compile', () => {
    t.server.app.compileSchemas()
  })
})
