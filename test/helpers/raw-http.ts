import assert from 'node:assert/strict'
import net from 'node:net'
import tls from 'node:tls'

/** One answer read off a raw socket: status, lower-case headers, body text. */
export interface RawReply {
  status: number
  headers: Record<string, string>
  text: string
}

/** Splits a raw HTTP/1.1 response (Connection: close, so the body runs to the end; chunked decoded). */
export function parseRaw(buf: Buffer): RawReply {
  const raw = buf.toString('latin1')
  const end = raw.indexOf('\r\n\r\n')
  assert.ok(end > 0, `a complete response head: ${JSON.stringify(raw.slice(0, 200))}`)
  const [statusLine, ...lines] = raw.slice(0, end).split('\r\n')
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1])
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const i = line.indexOf(':')
    headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim()
  }
  let body = buf.subarray(Buffer.byteLength(raw.slice(0, end + 4), 'latin1'))
  if (headers['transfer-encoding'] === 'chunked') {
    const parts: Buffer[] = []
    let at = 0
    for (;;) {
      const nl = body.indexOf('\r\n', at)
      const size = parseInt(body.subarray(at, nl).toString('latin1'), 16)
      if (!size) break
      parts.push(body.subarray(nl + 2, nl + 2 + size))
      at = nl + 2 + size + 2
    }
    body = Buffer.concat(parts)
  } else if (headers['content-length'] !== undefined) {
    body = body.subarray(0, Number(headers['content-length']))
  }
  return { status, headers, text: body.toString('utf8') }
}

/** Sends bytes as they are over TLS (or plain TCP) and reads the answer until the server closes. */
export function rawRequest(origin: string, data: string | Buffer, opts: { plain?: boolean } = {}): Promise<RawReply> {
  const url = new URL(origin)
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    const socket: net.Socket = opts.plain
      ? net.connect({ host: url.hostname, port: Number(url.port) }, () => socket.write(data))
      : tls.connect(
          { host: url.hostname, port: Number(url.port), rejectUnauthorized: false, servername: 'localhost' },
          () => socket.write(data),
        )
    socket.on('data', (c: Buffer) => {
      chunks.push(c)
      // Keep-alive answers: stop once the whole body is in.
      const buf = Buffer.concat(chunks)
      const end = buf.indexOf('\r\n\r\n')
      if (end > 0) {
        const len = /\r\ncontent-length: *(\d+)/i.exec(buf.subarray(0, end).toString('latin1'))
        if (len && buf.length >= end + 4 + Number(len[1])) socket.end()
      }
    })
    socket.on('error', (err) => (chunks.length ? resolve(parseRaw(Buffer.concat(chunks))) : reject(err)))
    socket.on('close', () => {
      try {
        resolve(parseRaw(Buffer.concat(chunks)))
      } catch (err) {
        reject(err)
      }
    })
  })
}
