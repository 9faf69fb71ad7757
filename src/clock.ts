/** The source of time for everything that stores or compares times; tests and the sandbox replace it. */
export interface Clock {
  now(): Date
}

export const systemClock: Clock = { now: () => new Date() }

/** A clock that starts at `start` and moves only when told (tests, sandbox). */
export class ManualClock implements Clock {
  private offsetMs = 0
  constructor(private readonly base: Clock = systemClock) {}
  now(): Date {
    return new Date(this.base.now().getTime() + this.offsetMs)
  }
  advance(ms: number): void {
    this.offsetMs += ms
  }
  /** How far this clock is from its base, in milliseconds. */
  offset(): number {
    return this.offsetMs
  }
}

/** ISO-8601 UTC text, the stored form of every time. */
export const iso = (d: Date): string => d.toISOString()

const pad = (n: number) => String(n).padStart(2, '0')
/** `YYYY-MM-DD`. */
export const ymd = (d: Date): string => `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`
/** `YYYY-MM-DD HH:MM:SS`. */
export const ymdhms = (d: Date): string =>
  `${ymd(d)} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`
/** `YYYY-MM-DD HH:MM`. */
export const ymdhm = (d: Date): string => `${ymd(d)} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`
