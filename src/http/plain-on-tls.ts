import type { Socket } from 'node:net'
import type { Server as TlsServer } from 'node:tls'
import { errors } from '../errors.js'
import { answerAndClose } from './plugins/errors.js'

/** The first byte of a TLS record carrying a handshake (a ClientHello opens every TLS connection). */
const TLS_HANDSHAKE = 0x16
// A TLS client speaks first and at once; a connection silent this long is dropped before TLS takes it.
const FIRST_BYTE_MS = 10_000

/** What answerPlainHttpOnTls hands back: the way to drop connections that have not sent a byte yet. */
export interface PlainHttpOnTls {
  /** Destroys the connections still waiting for their first byte (on shutdown, so close does not wait). */
  closePending(): void
}

/**
 * Makes an HTTPS server answer plain HTTP on its own port: each connection's first byte decides. A TLS
 * handshake (0x16) goes to the server's TLS handling unchanged; an upper-case letter (the start of an HTTP
 * method) gets `400 SSL connection is required` in the envelope and the connection is closed; anything else
 * goes to TLS as well, which refuses it as before. Only the first read of a connection is looked at.
 */
export function answerPlainHttpOnTls(server: TlsServer): PlainHttpOnTls {
  const tlsListeners = server.listeners('connection') as ((socket: Socket) => void)[]
  server.removeAllListeners('connection')
  const pending = new Set<Socket>()

  server.on('connection', (socket: Socket) => {
    pending.add(socket)
    const drop = () => {
      pending.delete(socket)
      socket.destroy()
    }
    socket.on('error', drop)
    socket.setTimeout(FIRST_BYTE_MS, drop)
    socket.once('readable', () => {
      pending.delete(socket)
      socket.removeListener('error', drop)
      socket.setTimeout(0)
      const first = socket.read(1) as Buffer | null
      if (first === null) {
        socket.destroy()
        return
      }
      socket.unshift(first)
      const byte = first[0]
      if (byte !== TLS_HANDSHAKE && byte >= 0x41 && byte <= 0x5a) {
        answerAndClose(socket, errors.sslRequired())
        return
      }
      for (const listener of tlsListeners) listener.call(server, socket)
    })
  })

  return {
    closePending() {
      for (const socket of pending) socket.destroy()
      pending.clear()
    },
  }
}
