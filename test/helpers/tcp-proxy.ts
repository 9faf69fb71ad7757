import net from 'node:net'

/** A TCP forwarder on a loopback port that a test can cut (a network outage between a client and a real server). */
export interface TcpProxy {
  port: number
  /** Ends every forwarded connection at once (reset) and refuses new ones until `restore()`. */
  cut(): void
  restore(): void
  close(): Promise<void>
}

/** Forwards 127.0.0.1:<port> to `target` on loopback. */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const open = new Set<net.Socket>()
  let down = false
  const server = net.createServer((client) => {
    if (down) return void client.resetAndDestroy()
    const upstream = net.connect(target)
    for (const s of [client, upstream]) {
      open.add(s)
      s.on('close', () => open.delete(s))
      s.on('error', () => {
        client.destroy()
        upstream.destroy()
      })
    }
    client.pipe(upstream).pipe(client)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (!address || typeof address === 'string') throw new Error('the proxy has no port')
  return {
    port: address.port,
    cut() {
      down = true
      for (const s of open) s.resetAndDestroy()
    },
    restore() {
      down = false
    },
    async close() {
      for (const s of open) s.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
