import { describe, it, after, before } from 'node:test'
import assert from 'node:assert/strict'
import AjvCompiler from '@fastify/ajv-compiler'
import { lazySchemaCompilers } from './schema-compilers.js'
import { startTestApp, type TestApp } from '../../test/helpers/app.js'

const schema = { type: 'object', properties: { n: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } }, required: ['n'], additionalProperties: false }
const route = { schema, method: 'POST', url: '/x', httpPart: 'body' }
// What Fastify hands the validator builder when no ajv option is set.
const ajvOptions = { customOptions: {}, plugins: [] }

describe('lazy schema compilers', () => {
  it('validate, coerce and report errors exactly as Fastify’s own Ajv compiler', () => {
    const lazy = lazySchemaCompilers().compilersFactory.buildValidator!({}, ajvOptions as never)(route as never) as (d: unknown) => boolean
    const eager = AjvCompiler()({}, ajvOptions as never)(route as never) as unknown as ((d: unknown) => boolean) & { errors: unknown }
    for (const data of [{ n: '7', tags: 'a', extra: 1 }, { tags: [] }, { n: 'x' }, 'text']) {
      const a = structuredClone(data)
      const b = structuredClone(data)
      assert.equal(lazy(a), eager(b))
      assert.deepEqual((lazy as unknown as { errors: unknown }).errors, eager.errors)
      assert.deepEqual(a, b)
    }
  })

  it('compile nothing until a schema is used, and everything on compileAll', () => {
    const { compilersFactory, compileAll } = lazySchemaCompilers()
    let compiled = 0
    const options = { ...ajvOptions, onCreate: (ajv: { compile: (s: unknown) => unknown }) => {
      const compile = ajv.compile.bind(ajv)
      ajv.compile = (s) => (compiled++, compile(s))
    } }
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
