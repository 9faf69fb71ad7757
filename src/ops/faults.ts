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
  /** Only calls whose path parameters have these values (`{"domain": "example.nl"}`). */
  params?: Record<string, string>
  /** Only calls of this account (its customer number). */
  customer_number?: number
  /** Only calls made with this API key (its prefix, as the key list shows it). */
  key_prefix?: string
  /** `Retry-After` (seconds) of an injected 429 or 503 (default 1 for a 429). */
  retry_after?: number
  /** Reset the connection instead of answering (after the delay). */
  reset?: boolean
}

export interface Fault extends Required<Pick<FaultInput, 'operation' | 'probability' | 'latency_ms'>> {
  id: number
  status: FaultStatus | null
  status_description: string | null
  /** Firings left; null = unlimited. */
  remaining: number | null
  fired: number
  params: Record<string, string> | null
  customer_number: number | null
  key_prefix: string | null
  retry_after: number | null
  reset: boolean
}

/** The call a fault is matched against. */
export interface FaultCall {
  operation: string
  params: Record<string, unknown>
  customerNumber: number | null
  keyPrefix: string | null
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
      params: input.params ?? null,
      customer_number: input.customer_number ?? null,
      key_prefix: input.key_prefix ?? null,
      retry_after: input.retry_after ?? (input.status === 429 ? 1 : null),
      reset: input.reset ?? false,
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

  /** The fault that fires for this call, if any; counts it and drops a used-up fault. */
  draw(call: FaultCall): Fault | null {
    for (const f of this.faults) {
      if (!matches(f, call)) continue
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

/** Whether a fault's conditions hold for a call: its operation, and the path parameters, account and key it names. */
function matches(f: Fault, call: FaultCall): boolean {
  if (f.operation !== call.operation) return false
  if (f.customer_number !== null && f.customer_number !== call.customerNumber) return false
  if (f.key_prefix !== null && f.key_prefix !== call.keyPrefix) return false
  if (f.params === null) return true
  return Object.entries(f.params).every(([k, v]) => String(call.params[k] ?? '').toLowerCase() === v.toLowerCase())
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
