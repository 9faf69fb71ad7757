import type { Socket } from 'node:net'
import type { Server as TlsServer, TLSSocket } from 'node:tls'
import { errors } from '../errors.js'
import { answerAndClose } from './plugins/errors.js'
import { interceptConnections } from './connection-guard.js'

/** The first byte of a TLS record carrying a handshake (a ClientHello opens every TLS connection). */
const TLS_HANDSHAKE = 0x16

/** What answerPlainHttpOnTls hands back: the way to drop connections that have not finished TLS yet. */
export interface PlainHttpOnTls {
  /** Destroys the connections still waiting for their first byte or their handshake (on shutdown). */
  closePending(): void
}

/** A connection's two ends, the same on the TCP socket and on the TLS socket over it. */
const peerOf = (s: Socket) => `${s.remoteAddress}|${s.remotePort}|${s.localAddress}|${s.localPort}`

/**
 * Makes an HTTPS server answer plain HTTP on its own port: each connection's first byte decides. A TLS
 * handshake (0x16) goes to the server's TLS handling unchanged; an upper-case letter (the start of an HTTP
 * method) gets `400 SSL connection is required` in the envelope and the connection is closed; anything else
 * goes to TLS as well, which refuses it as before. Only the first read of a connection is looked at.
 * A connection that has not finished its TLS handshake `handshakeTimeoutMs` after it was accepted (silent, or
 * a handshake sent slowly or never completed) is destroyed.
 */
export function answerPlainHttpOnTls(server: TlsServer, handshakeTimeoutMs: number): PlainHttpOnTls {
  // Connections not through TLS yet, by their two ends, with their deadline.
  const pending = new Map<string, { socket: Socket; deadline: NodeJS.Timeout }>()
  const settle = (key: string) => {
    const entry = pending.get(key)
    if (!entry) return
    clearTimeout(entry.deadline)
    pending.delete(key)
  }
  server.on('secureConnection', (tlsSocket: TLSSocket) => settle(peerOf(tlsSocket)))

  interceptConnections(server, (socket, pass) => {
    const key = peerOf(socket)
    const drop = () => {
      settle(key)
      socket.destroy()
    }
    pending.set(key, { socket, deadline: setTimeout(drop, handshakeTimeoutMs).unref() })
    socket.once('close', () => settle(key))
    socket.on('error', drop)
    socket.once('readable', () => {
      socket.removeListener('error', drop)
      const first = socket.read(1) as Buffer | null
      if (first === null) {
        drop()
        return
      }
      socket.unshift(first)
      const byte = first[0]
      if (byte !== TLS_HANDSHAKE && byte >= 0x41 && byte <= 0x5a) {
        settle(key)
        answerAndClose(socket, errors.sslRequired())
        return
      }
      pass(socket)
    })
  })

  return {
    closePending() {
      for (const [key, { socket }] of pending) {
        settle(key)
        socket.destroy()
      }
    },
  }
}
