import { randomInt } from 'node:crypto'
import type { FaultStatus } from '../errors.js'

/** A fault to inject into calls of one customer operation. */
export interface FaultInput {
  /** The operationId of the customer route (see the OpenAPI document). */
  operation: string
  /** Answer with this status instead of running the operation; omitted = only delay it. */
  status?: FaultStatus
  status_description?: string
  /** Chance per matching call, 0–1 (default 1). */
  probability?: number
  /** Delay before answering (or before running the operation), in milliseconds. */
  latency_ms?: number
  /** How many times the fault fires before it is removed; omitted = until deleted. */
  count?: number
}

export interface Fault extends Required<Pick<FaultInput, 'operation' | 'probability' | 'latency_ms'>> {
  id: number
  status: FaultStatus | null
  status_description: string | null
  /** Firings left; null = unlimited. */
  remaining: number | null
  fired: number
}

/** Sandbox fault injection: in memory, per process. */
export class FaultInjector {
  private faults: Fault[] = []
  private nextId = 1

  add(input: FaultInput): Fault {
    const fault: Fault = {
      id: this.nextId++,
      operation: input.operation,
      status: input.status ?? null,
      status_description: input.status_description ?? null,
      probability: input.probability ?? 1,
      latency_ms: input.latency_ms ?? 0,
      remaining: input.count ?? null,
      fired: 0,
    }
    this.faults.push(fault)
    return fault
  }

  list(): Fault[] {
    return this.faults.map((f) => ({ ...f }))
  }

  remove(id: number): boolean {
    const before = this.faults.length
    this.faults = this.faults.filter((f) => f.id !== id)
    return this.faults.length !== before
  }

  clear(): void {
    this.faults = []
  }

  /** The fault that fires for this call of `operation`, if any; counts it and drops a used-up fault. */
  draw(operation: string): Fault | null {
    for (const f of this.faults) {
      if (f.operation !== operation) continue
      if (f.probability < 1 && randomInt(1_000_000) >= f.probability * 1_000_000) continue
      f.fired++
      if (f.remaining !== null) {
        f.remaining--
        if (f.remaining <= 0) this.faults = this.faults.filter((x) => x !== f)
      }
      return { ...f }
    }
    return null
  }
}

/**
 * Sandbox: a hook for the start of every job attempt that ends the process at once (SIGKILL, as the kernel's OOM
 * killer or a native crash would) when the job is of `kind`. Lets a test or an operator try what becomes of a job
 * that keeps killing its process.
 */
export function crashOnJob(kind: string): (job: { kind: string }) => void {
  return (job) => {
    if (job.kind === kind) process.kill(process.pid, 'SIGKILL')
  }
}
