/** How long an `Idempotency-Key` holds: the same key within this window answers the first response again. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3600_000
