import type { EnvReader } from './env-reader.js'

// The listeners' connection settings: time limits and the per-address cap.

/** HOSTAPI_REQUEST_TIMEOUT_MS as set (checked with the connection settings), or its default. */
export function requestTimeoutDefault(r: EnvReader): number {
  const set = Number(r.env.HOSTAPI_REQUEST_TIMEOUT_MS)
  return Number.isInteger(set) && set >= 1000 && set <= 3_600_000 ? set : 120_000
}

/** Time limits and the per-address cap of the listeners' connections. */
export interface ConnectionsConfig {
  headersTimeoutMs: number
  requestTimeoutMs: number
  idleTimeoutMs: number
  tlsHandshakeTimeoutMs: number
  maxPerAddress: number
}

/** Time limits and the per-address cap of the listeners' connections, from the environment. */
export function connectionConfig(r: EnvReader): ConnectionsConfig {
  const headersTimeoutMs = r.int('HOSTAPI_HEADERS_TIMEOUT_MS', 10_000, 100, 600_000)
  const requestTimeoutMs = r.int('HOSTAPI_REQUEST_TIMEOUT_MS', 120_000, 100, 3_600_000)
  if (requestTimeoutMs < headersTimeoutMs)
    r.problem('HOSTAPI_REQUEST_TIMEOUT_MS must not be less than HOSTAPI_HEADERS_TIMEOUT_MS')
  return {
    headersTimeoutMs,
    requestTimeoutMs,
    idleTimeoutMs: r.int('HOSTAPI_IDLE_TIMEOUT_MS', 30_000, 100, 600_000),
    tlsHandshakeTimeoutMs: r.int('HOSTAPI_TLS_HANDSHAKE_TIMEOUT_MS', 10_000, 100, 120_000),
    maxPerAddress: r.int('HOSTAPI_MAX_CONNECTIONS_PER_IP', 64, 0, 1_000_000),
  }
}
