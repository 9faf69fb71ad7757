import type { MemoryWindowCounter, WindowCount, WindowCounter } from './window-counter.js'

/**
 * One count a worker asks of the primary: a hit (or a read) of `key`. It is counted at the primary's time: asks of
 * several processes arrive in any order, and a window must not move back to an ask's earlier time (the workers' clock
 * is the system's; sandbox mode, whose clock moves, runs one process).
 */
interface CountAsk {
  key: string
  windowMs: number
  /** Hits to count; 0 reads the count. */
  hits: number
}

/** The messages between the workers and the primary: a batch of asks, and its counts in the same order. */
export const ASK = 'hostapi:count'
const ANSWER = 'hostapi:counted'
interface AskMessage {
  type: typeof ASK
  id: number
  asks: CountAsk[]
}
interface AnswerMessage {
  type: typeof ANSWER
  id: number
  counts: WindowCount[]
}

/** How a worker reaches the primary (process.send and the process's 'message' events in a cluster worker). */
export interface CounterChannel {
  send(message: AskMessage): void
  onMessage(listener: (message: unknown) => void): void
}

/**
 * Counters kept by the primary process of `serve --workers N` and reached over its IPC channel, so the workers of
 * one machine share each window as if they were one process. The asks of one turn of the event loop go as one message.
 */
export class SharedWindowCounter implements WindowCounter {
  private nextId = 1
  private batch: { ask: CountAsk; resolve: (count: WindowCount) => void }[] = []
  private readonly waiting = new Map<number, ((count: WindowCount) => void)[]>()

  constructor(private readonly channel: CounterChannel) {
    channel.onMessage((message) => {
      if (!isAnswer(message)) return
      const resolvers = this.waiting.get(message.id)
      if (!resolvers) return
      this.waiting.delete(message.id)
      for (const [i, resolve] of resolvers.entries()) resolve(message.counts[i] ?? { current: 0, ttl: 0 })
    })
  }

  hit(key: string, windowMs: number, hits = 1): Promise<WindowCount> {
    return this.ask({ key, windowMs, hits })
  }

  peek(key: string, windowMs: number): Promise<WindowCount> {
    return this.ask({ key, windowMs, hits: 0 })
  }

  private ask(ask: CountAsk): Promise<WindowCount> {
    return new Promise((resolve) => {
      if (this.batch.length === 0) setImmediate(() => this.flush())
      this.batch.push({ ask, resolve })
    })
  }

  private flush(): void {
    const batch = this.batch
    this.batch = []
    const id = this.nextId++
    this.waiting.set(
      id,
      batch.map((b) => b.resolve),
    )
    this.channel.send({ type: ASK, id, asks: batch.map((b) => b.ask) })
  }
}

const isAnswer = (m: unknown): m is AnswerMessage =>
  typeof m === 'object' && m !== null && (m as { type?: unknown }).type === ANSWER

/**
 * The primary's side of SharedWindowCounter: the answer to a worker's batch, counted in `counter`; null
 * for any other message.
 */
export function answerCounts(counter: MemoryWindowCounter, message: unknown): AnswerMessage | null {
  if (typeof message !== 'object' || message === null || (message as { type?: unknown }).type !== ASK) return null
  const { id, asks } = message as AskMessage
  const counts = asks.map((a) =>
    a.hits > 0 ? counter.hitNow(a.key, a.windowMs, a.hits) : counter.peekNow(a.key, a.windowMs),
  )
  return { type: ANSWER, id, counts }
}
