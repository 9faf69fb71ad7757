import fs from 'node:fs'
import https from 'node:https'
import type { AddressInfo } from 'node:net'
import { selfSignedCert } from './smtp.js'
import { eventually, later } from './wait.js'

/** One request a receiver got. */
export interface Received {
  path: string
  headers: Record<string, string>
  body: string
  at: number
}

/** An HTTPS webhook receiver of a test on 127.0.0.1 with a self-signed certificate. */
export interface Receiver {
  /** `https://127.0.0.1:<port>` (add a path). */
  origin: string
  /** The certificate (PEM file) to trust (HOSTAPI_WEBHOOKS_CA_FILE). */
  caFile: string
  received: Received[]
  /** Answers the next requests with these statuses (then 200). */
  answer(...statuses: number[]): void
  /** Waits this long before answering each request. */
  delayMs: number
  /** Never answers (until closed). */
  hang: boolean
  /** The most requests it was answering at one time. */
  maxInFlight: number
  /** Resolves once `n` requests arrived (or rejects after `ms`). */
  waitFor(n: number, ms?: number): Promise<Received[]>
  close(): Promise<void>
}

/** Starts a receiver; `dir` holds its certificate (one certificate can serve several receivers). */
export async function startReceiver(dir: string, cert = selfSignedCert(dir)): Promise<Receiver> {
  const script: number[] = []
  const received: Received[] = []
  let inFlight = 0
  const server = https.createServer(
    { key: fs.readFileSync(cert.key), cert: fs.readFileSync(cert.cert) },
    (req, res) => {
      r.maxInFlight = Math.max(r.maxInFlight, ++inFlight)
      res.on('close', () => inFlight--)
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        received.push({
          path: req.url ?? '',
          headers: req.headers as Record<string, string>,
          body: Buffer.concat(chunks).toString('utf8'),
          at: Date.now(),
        })
        if (r.hang) return
        const status = script.shift() ?? 200
        const reply = () => {
          if (status >= 300 && status < 400) res.setHeader('location', '/redirected')
          res.writeHead(status).end(status < 300 ? 'ok' : 'no')
        }
        if (r.delayMs) later(r.delayMs, reply)
        else reply()
      })
    },
  )
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const r: Receiver = {
    origin: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    caFile: cert.cert,
    received,
    delayMs: 0,
    hang: false,
    maxInFlight: 0,
    answer: (...statuses) => void script.push(...statuses),
    async waitFor(n, ms = 10_000) {
      const arrived = () => {
        if (received.length < n) throw new Error(`${received.length} of ${n} requests arrived`)
      }
      await eventually(arrived, {
        what: `${n} requests arrive`,
        timeoutMs: ms,
        intervalMs: 20,
      })
      return received
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
  return r
}
