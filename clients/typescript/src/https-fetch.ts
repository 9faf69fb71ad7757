// A fetch over node:https that trusts the given CA certificates (PEM), for a server whose certificate a private
// root signs (the local root `hostapi cert` names). Node's global fetch takes no CA option without undici's
// dispatcher, which is not a dependency here; node:https is loaded only when a `ca` is given.

/** A fetch that verifies the server's certificate against `ca` (PEM text, one or more certificates). */
export function fetchTrusting(ca: string | string[]): (request: Request) => Promise<Response> {
  let agent: Promise<{ https: typeof import('node:https'); agent: import('node:https').Agent }> | undefined
  const load = () => {
    agent ??= import('node:https').then((https) => ({ https, agent: new https.Agent({ keepAlive: true, ca }) }))
    return agent
  }
  return async (request) => {
    const { https, agent } = await load()
    const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined
    return new Promise<Response>((resolve, reject) => {
      const req = https.request(
        request.url,
        { method: request.method, headers: Object.fromEntries(request.headers), agent, signal: request.signal },
        (res) => {
          const chunks: Buffer[] = []
          res.on('data', (c: Buffer) => chunks.push(c))
          res.on('error', reject)
          res.on('end', () => {
            const headers = new Headers()
            for (const [name, value] of Object.entries(res.headers)) {
              for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, v)
            }
            const status = res.statusCode ?? 500
            const empty = status === 204 || status === 304 || request.method === 'HEAD'
            resolve(new Response(empty ? null : Buffer.concat(chunks), { status, headers }))
          })
        },
      )
      req.on('error', reject)
      req.end(body)
    })
  }
}
