import assert from 'node:assert/strict'
import type { Reply, TestApp } from './app.js'

/** One call of the MCP client (vitrionbv/mijn-host-mcp): the tool's name and variant, and the answer. */
export interface Call {
  name: string
  status: number
  text: string
}

/**
 * The MCP client's HTTP calls against the app `t()` with the API key `key()`, as its client makes them (JSON bodies,
 * API-Key, Accept, Content-Type on every call, its User-Agent); every call is recorded in `calls`.
 */
export function mcpClient(t: () => TestApp, key: () => string) {
  const calls: Call[] = []
  /** One call as the client sends it; the reply is recorded under the tool's name and variant. */
  async function send(
    name: string,
    method: string,
    path: string,
    opts: {
      query?: Record<string, string | number | undefined>
      body?: unknown
      accept?: string
      /** False for the test's own reads between the calls: they are not counted. */
      record?: boolean
    } = {},
  ): Promise<Reply> {
    const params = new URLSearchParams()
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) params.set(k, String(v))
    const qs = params.toString()
    const headers = {
      'API-Key': key(),
      Accept: opts.accept ?? 'application/json',
      'Content-Type': 'application/json',
      'User-Agent': '@vitrion/mijn-host-mcp/0.2.0',
    }
    const bodiless = method === 'POST' || method === 'PUT' ? { rawBody: '' } : {}
    const reply = await t().request(method, `${path}${qs ? `?${qs}` : ''}`, {
      headers,
      ...(opts.body === undefined ? bodiless : { rawBody: JSON.stringify(opts.body) }),
    })
    const text = reply.body?.status_description ?? ''
    if (opts.record !== false) calls.push({ name, status: reply.status, text })
    if (process.env.PROBE) console.log(name, reply.status, text, JSON.stringify(reply.body?.data ?? '').slice(0, 300))
    return reply
  }
  /** A call that must answer 200; its `data` (or `details`). */
  // biome-ignore lint/suspicious/noExplicitAny: the answers are read as the client's user reads them
  async function ok(...args: Parameters<typeof send>): Promise<any> {
    const r = await send(...args)
    if (!process.env.PROBE) assert.equal(r.status, 200, `${args[0]}: ${r.status} ${r.text}`)
    return r.body?.data ?? r.body?.details
  }
  /** A call the real API refuses for this input too: the exact status and text. */
  async function refused(status: number, text: string, ...args: Parameters<typeof send>): Promise<void> {
    const r = await send(...args)
    if (!process.env.PROBE)
      assert.deepEqual({ status: r.status, text: r.body?.status_description }, { status, text }, args[0])
  }
  return { send, ok, refused, calls }
}
