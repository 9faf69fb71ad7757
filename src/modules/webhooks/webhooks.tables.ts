import type { Generated, Selectable } from 'kysely'

/** The tables of the webhooks area. */
export interface WebhookTables {
  webhook_endpoints: WebhookEndpointsTable
  webhook_events: WebhookEventsTable
  webhook_deliveries: WebhookDeliveriesTable
}

export interface WebhookEndpointsTable {
  id: Generated<number>
  account_id: number
  /**
   * The owner: the user who created the endpoint or last set its `url` or `events`. It receives only the events
   * this user may read; null once the user is deleted (then it receives none).
   */
  user_id: number | null
  url: string
  description: string
  /** JSON array of event names, or `["*"]`. */
  events: string
  enabled: number
  /** Why the endpoint was disabled by hostapi (failing deliveries); null when the customer set `enabled`. */
  disabled_reason: string | null
  /** The signing secret (`whsec_…`), sealed with the secret key. */
  secret: string
  /** The secret before the last rotation, sealed; signs alongside the new one until `previous_secret_until`. */
  previous_secret: string | null
  previous_secret_until: string | null
  last_success_at: string | null
  created_at: string
  updated_at: string
}

export interface WebhookEventsTable {
  id: Generated<number>
  account_id: number
  /** `msg_…`: the `webhook-id` header, the same on every attempt and endpoint. */
  uid: string
  type: string
  /** The JSON body sent: `{type, timestamp, data}`. */
  payload: string
  /**
   * Besides main users, the only user who may read the event (a ticket's: the user who opened it); 0 for main users
   * only, null when every user holding the event's area may.
   */
  reader_id: number | null
  created_at: string
}

export interface WebhookDeliveriesTable {
  id: Generated<number>
  account_id: number
  endpoint_id: number
  event_id: number
  status: 'pending' | 'sending' | 'succeeded' | 'failed'
  attempts: number
  next_attempt_at: string | null
  /** While `sending`: until when the attempt holds one of the endpoint's concurrent slots. */
  locked_until: string | null
  /**
   * 1 while a due delivery waits, without a job, for one of its endpoint's concurrent slots: the attempt that frees
   * a slot goes on with it.
   */
  parked: number
  last_attempt_at: string | null
  response_status: number | null
  duration_ms: number | null
  /** What the customer sees of the last failure: its class, never which address or socket error. */
  last_error: string | null
  /** The last failure as it happened (address, socket error): for the operator and the log. */
  error_detail: string | null
  created_at: string
  updated_at: string
}

export type WebhookEndpoint = Selectable<WebhookEndpointsTable>
export type WebhookEvent = Selectable<WebhookEventsTable>
export type WebhookDelivery = Selectable<WebhookDeliveriesTable>
