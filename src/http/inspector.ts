import fs from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { FastifyPluginAsync } from 'fastify'
import { Type } from 'typebox'
import { errors } from '../errors.js'

/** The inspector's files, each with its type: plain HTML, CSS and ES modules, served as they are (no build step). */
export const INSPECTOR_FILES: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'inspector.css': 'text/css; charset=utf-8',
  'inspector.js': 'text/javascript; charset=utf-8',
  'api.js': 'text/javascript; charset=utf-8',
  'views.js': 'text/javascript; charset=utf-8',
  'requests.js': 'text/javascript; charset=utf-8',
  'state.js': 'text/javascript; charset=utf-8',
  'work.js': 'text/javascript; charset=utf-8',
  'control.js': 'text/javascript; charset=utf-8',
}

/**
 * Only the page's own files: no inline script or style, no third-party asset, requests only to this origin (the
 * admin API), and no framing.
 */
export const INSPECTOR_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/**
 * The folder of the files: src/inspector beside src/http (tsx), dist/src/inspector beside dist/src/http (compiled,
 * copied there by the build), and the same from the single-file bundle in dist/src/cli.
 */
export function inspectorDir(): string {
  const dir = fileURLToPath(new URL('../inspector/', import.meta.url))
  if (!fs.existsSync(`${dir}index.html`)) throw new Error(`the inspector's files are missing (looked in ${dir})`)
  return dir
}

/**
 * The sandbox inspector at `/sandbox`: a page over the admin API of the same listener. The files hold no data; every
 * call the page makes carries the admin token, which the user enters once and the browser keeps for the session.
 */
export const inspectorRoutes: FastifyPluginAsync = async (app) => {
  const dir = inspectorDir()
  const files = new Map(Object.keys(INSPECTOR_FILES).map((name) => [name, fs.readFileSync(dir + name)]))
  const send = (name: string) => {
    const body = files.get(name)
    if (!body) throw errors.endpointNotFound()
    return { body, type: INSPECTOR_FILES[name] }
  }
  const headers = { 'content-security-policy': INSPECTOR_CSP, 'cache-control': 'no-cache' }
  const config = { rateLimit: false } as const

  app.get('/sandbox', { config, schema: { hide: true } }, async (_req, reply) => {
    const f = send('index.html')
    return reply.headers(headers).type(f.type).send(f.body)
  })
  app.get(
    '/sandbox/:file',
    { config, schema: { hide: true, params: Type.Object({ file: Type.String({ maxLength: 64 }) }) } },
    async (req, reply) => {
      const f = send((req.params as { file: string }).file)
      return reply.headers(headers).type(f.type).send(f.body)
    },
  )
}
