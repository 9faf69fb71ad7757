import { Type } from 'typebox'
import type { JobKind } from '../../jobs/runner.js'

/** The job kind that makes one attempt of one webhook delivery. */
export const DELIVERY_JOB = 'webhooks.deliver'

/** The delivery job's name and payload: queued with each delivery (webhooks.repository), run by the deliverer. */
export const DELIVERY_KIND = {
  name: DELIVERY_JOB,
  payload: Type.Object({ deliveryId: Type.Integer() }),
} satisfies JobKind

/** A delivery job is run again after a crash (its lease runs out); its own attempts are counted on the delivery. */
export const DELIVERY_JOB_ATTEMPTS = 5
