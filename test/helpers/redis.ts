import { spawn, type ChildProcess } from 'node:child_process'
import { after } from 'node:test'
import pino from 'pino'
import { openRedis, RedisGuard } from '../../src/db/redis.js'
import readline from 'node:readline'
import { owned } from './children.js'
import { freePort } from './dns.js'

/** A free port on the loopback address, outside the range of client source ports (see dns.ts). */
export { freePort }

/**
 * A `redis-server` of the test's own on a loopback port, without persistence, that the test may stop and start again
 * (never the shared one).
 */
export class OwnRedis {
  private child: ChildProcess | null = null
  private constructor(readonly port: number) {}

  static async start(): Promise<OwnRedis> {
    const r = new OwnRedis(await freePort())
    await r.start()
    return r
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`
  }

  /** Starts redis-server on the port and resolves once it accepts connections. */
  async start(): Promise<void> {
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'notice'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    this.child = owned(child)
    await new Promise<void>((resolve, reject) => {
      const lines: string[] = []
      readline.createInterface({ input: child.stdout! }).on('line', (line) => {
        lines.push(line)
        if (/Ready to accept connections/.test(line)) resolve()
      })
      child.once('exit', (code) => reject(new Error(`redis-server exited (${code}):\n${lines.join('\n')}`)))
      child.once('error', reject)
    })
  }

  /** Stops redis-server without closing anything (SIGSTOP): connections stay open and nothing answers. */
  pause(): void {
    this.child?.kill('SIGSTOP')
  }

  resume(): void {
    this.child?.kill('SIGCONT')
  }

  /** Kills redis-server at once (no shutdown handshake: clients see their connections drop). */
  async kill(): Promise<void> {
    const child = this.child
    this.child = null
    if (!child || child.exitCode !== null) return
    child.kill('SIGCONT')
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGKILL')
    await exited
  }
}

const silent = pino({ level: 'silent' })
const guards: RedisGuard[] = []
// Registered as the test file imports this module (a hook registered while a test runs would belong to that test).
after(async () => {
  for (const g of guards.splice(0)) {
    g.close()
    await g.redis.quit().catch(() => g.redis.disconnect())
  }
})

/**
 * A guarded client of the Redis at `url` (the breaker's timeouts in `opts`), closed after the test file's tests, ready
 * unless it cannot connect within 5 s.
 */
export async function redisGuard(url: string, opts: { timeoutMs: number; retryMs: number }): Promise<RedisGuard> {
  const guard = new RedisGuard(openRedis(url, opts, silent), opts, silent)
  guards.push(guard)
  await guard.whenReady(5000)
  return guard
}
