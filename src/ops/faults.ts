import { randomInt } from 'node:crypto'
import type { FaultStatus } from '../errors.js'

/**
 * The asynchronous work a fault can be injected into (instead of a customer operation), and what it does there. A
 * fault of a work kind makes the work fail as the real outside party would make it fail; its `status_description` is
 * the reason given, `params` match the values named.
 */
export const WORK_KINDS = {
  'registry.register':
    'The registry refuses the registration (or transfer) of an ordered domain: the order item ends in error with ' +
    'code `refused` and the text as description, the order is not completed, `domain.order.failed` is sent. ' +
    'params: `domain` (the name), `type` (`register` or `transfer`).',
  'vps.task':
    'The next task (power, rescue, reinstall, backup, restore) of a VPS fails at the hypervisor: the task ends ' +
    '`failed` with the text as its error, the VPS keeps the state the hypervisor reports, `vps.task.failed` is ' +
    'sent. params: `vps` (the VPS id), `action` (`start`, `stop`, `restart`, …).',
  'ca.issue':
    'The CA refuses to issue a validated certificate: it ends `ERR` with the reason `The CA refused the request: ' +
    '<text>`, `certificate.failed` is sent. params: `certificate` (the certificate id), `domain` (its common name).',
  'webhook.delivery':
    'The receiver does not answer an attempt within the timeout (HOSTAPI_WEBHOOKS_TIMEOUT_MS): nothing is sent, the ' +
    'attempt is recorded as a timeout (`The receiver could not be reached`) and retried on the backoff schedule. ' +
    'params: `endpoint` (the endpoint id), `event` (the event type).',
} as const

/** A kind of asynchronous work a fault can be injected into. */
export type WorkKind = keyof typeof WORK_KINDS

/** Whether `name` is a work kind faults can be injected into. */
export const isWorkKind = (name: string): name is WorkKind => Object.hasOwn(WORK_KINDS, name)

/** A fault to inject into calls of one customer operation, or into one kind of asynchronous work. */
export interface FaultInput {
  /** The operationId of the customer route (see the OpenAPI document); or `work`. */
  operation?: string
  /** The asynchronous work to fail; or `operation`. */
  work?: WorkKind
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

export interface Fault extends Required<Pick<FaultInput, 'probability' | 'latency_ms'>> {
  id: number
  operation: string | null
  work: WorkKind | null
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

/** The call (of a customer operation, or a run of asynchronous work) a fault is matched against. */
export interface FaultCall {
  operation?: string
  work?: WorkKind
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
      operation: input.operation ?? null,
      work: input.work ?? null,
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

  /** Whether any fault names this work kind (work looks up nothing else while none does). */
  hasWork(work: WorkKind): boolean {
    return this.faults.some((f) => f.work === work)
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
  if (f.operation !== (call.operation ?? null) || f.work !== (call.work ?? null)) return false
  if (f.customer_number !== null && f.customer_number !== call.customerNumber) return false
  if (f.key_prefix !== null && f.key_prefix !== call.keyPrefix) return false
  if (f.params === null) return true
  return Object.entries(f.params).every(([k, v]) => String(call.params[k] ?? '').toLowerCase() === v.toLowerCase())
}

/**
 * What asynchronous work asks, in sandbox mode only, before it calls the outside party: the fault that fires for this
 * run of `work` of the account, matched against `params`, if any. Production work is given none and asks nothing.
 */
export type WorkFaults = (work: WorkKind, accountId: number, params: Record<string, string>) => Promise<Fault | null>

/**
 * The WorkFaults of a sandbox: the account's customer number is read (through `customerNumberOf`) only when a fault of
 * the work kind exists; `fired` is told of each fault that fires.
 */
export function workFaults(
  faults: FaultInjector,
  customerNumberOf: (accountId: number) => Promise<number | null>,
  fired: (work: WorkKind) => void = () => undefined,
): WorkFaults {
  return async (work, accountId, params) => {
    if (!faults.hasWork(work)) return null
    const fault = faults.draw({ work, params, customerNumber: await customerNumberOf(accountId), keyPrefix: null })
    if (fault) fired(work)
    return fault
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
