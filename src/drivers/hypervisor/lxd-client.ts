import http from 'node:http'
import https from 'node:https'

/** Where LXD listens: its unix socket, or an HTTPS URL with a client certificate (PEM texts). */
export interface LxdConnection {
  url: string
  cert?: string
  key?: string
  ca?: string
  /** The LXD project every request is made in. */
  project: string
}

/** An LXD operation as `GET /1.0/operations/{id}` describes it. */
export interface LxdOperation {
  id: string
  status: string
  status_code: number
  err: string
  metadata: Record<string, unknown> | null
}

/** LXD answered with an error (`error_code` is the HTTP status); `status` 0 means LXD could not be reached. */
export class LxdError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
    this.name = 'LxdError'
  }
}

interface Envelope {
  type: 'sync' | 'async' | 'error'
  error?: string
  error_code?: number
  operation?: string
  metadata?: unknown
}

const MAX_ANSWER = 32 << 20

/** A small client of LXD's REST API (`/1.0`) over its unix socket or HTTPS; no native bindings. */
export class LxdClient {
  private readonly agent: http.Agent
  private readonly base: URL | null

  constructor(private readonly conn: LxdConnection) {
    if (/^https:\/\//i.test(conn.url)) {
      this.base = new URL(conn.url)
      this.agent = new https.Agent({ keepAlive: true, cert: conn.cert, key: conn.key, ca: conn.ca })
    } else {
      this.base = null
      this.agent = new http.Agent({ keepAlive: true })
    }
  }

  /** Sends one request; resolves with LXD's envelope, throws LxdError for an error answer or no answer. */
  request(method: string, path: string, body?: unknown, timeoutMs = 60_000): Promise<Envelope> {
    const sep = path.includes('?') ? '&' : '?'
    const full = `${path}${sep}project=${encodeURIComponent(this.conn.project)}`
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body))
    const headers: Record<string, string | number> = payload
      ? { 'content-type': 'application/json', 'content-length': payload.length }
      : {}
    return new Promise((resolve, reject) => {
      const opts: http.RequestOptions = { method, path: full, headers, agent: this.agent, timeout: timeoutMs }
      if (this.base) {
        opts.host = this.base.hostname
        opts.port = this.base.port || 8443
      } else opts.socketPath = this.conn.url
      const req = (this.base ? https : http).request(opts, (res) => {
        const chunks: Buffer[] = []
        let size = 0
        res.on('data', (c: Buffer) => {
          size += c.length
          if (size > MAX_ANSWER) req.destroy(new Error('LXD answer too large'))
          else chunks.push(c)
        })
        res.on('end', () => {
          let env: Envelope
          try {
            env = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Envelope
          } catch {
            return reject(new LxdError(res.statusCode ?? 0, `LXD answered ${res.statusCode} without JSON`))
          }
          if (env.type === 'error' || (res.statusCode ?? 500) >= 400)
            return reject(new LxdError(env.error_code ?? res.statusCode ?? 500, env.error || 'LXD error'))
          resolve(env)
        })
        res.on('error', (e) => reject(new LxdError(0, `LXD unreachable: ${e.message}`)))
      })
      req.on('timeout', () => req.destroy(new Error('timed out')))
      req.on('error', (e) => reject(new LxdError(0, `LXD unreachable: ${e.message}`)))
      req.end(payload)
    })
  }

  /** A synchronous call's metadata. */
  async get<T>(path: string): Promise<T> {
    return (await this.request('GET', path)).metadata as T
  }

  /** A call LXD may answer synchronously or with an operation; the operation's id, or null when it was sync. */
  async call(method: string, path: string, body?: unknown): Promise<string | null> {
    const env = await this.request(method, path, body)
    if (env.type !== 'async') return null
    const operation = String(env.operation)
    return (env.metadata as { id?: string } | undefined)?.id ?? operation.slice(operation.lastIndexOf('/') + 1)
  }

  /** Waits up to `timeoutSeconds` for an operation to end; the operation as it is then. */
  async wait(id: string, timeoutSeconds: number): Promise<LxdOperation> {
    const env = await this.request(
      'GET',
      `/1.0/operations/${encodeURIComponent(id)}/wait?timeout=${timeoutSeconds}`,
      undefined,
      (timeoutSeconds + 30) * 1000,
    )
    return env.metadata as LxdOperation
  }

  close(): void {
    this.agent.destroy()
  }
}
