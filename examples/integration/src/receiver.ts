import { createHmac, timingSafeEqual } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'

/** One webhook delivery as the receiver got it, its signature checked. */
export interface Delivery {
  id: string
  type: string
  data: Record<string, unknown>
}

/**
 * Whether `signature` (the `webhook-signature` header: `v1,<base64>` entries) signs `id.timestamp.body` with the
 * endpoint's secret (`whsec_<base64>`), as the Standard Webhooks specification says.
 */
export function verify(secret: string, id: string, timestamp: string, body: string, signature: string): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64')
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest()
  return signature.split(' ').some((entry) => {
    const [version, value] = entry.split(',')
    const given = Buffer.from(value ?? '', 'base64')
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected)
  })
}

/**
 * The application's webhook receiver: it keeps the deliveries whose signature verifies (once each, by webhook-id)
 * and refuses the others. The secret is set once the endpoint is created.
 */
export async function startReceiver() {
  const deliveries: Delivery[] = []
  let secret = ''
  const server = http.createServer((req, res) => {
    let body = ''
    req.on('data', (chunk: Buffer) => {
      body += chunk
    })
    req.on('end', () => {
      const header = (name: string) => String(req.headers[name] ?? '')
      const id = header('webhook-id')
      if (!secret || !verify(secret, id, header('webhook-timestamp'), body, header('webhook-signature'))) {
        res.writeHead(401).end()
        return
      }
      const event = JSON.parse(body) as { type: string; data: Record<string, unknown> }
      if (!deliveries.some((d) => d.id === id)) deliveries.push({ id, type: event.type, data: event.data })
      res.writeHead(204).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hooks/hostapi`,
    deliveries,
    useSecret: (s: string) => {
      secret = s
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
