import { createHmac, randomBytes } from 'node:crypto'

/**
 * Signing as the Standard Webhooks specification asks: a secret `whsec_<base64 of the key>`, and a
 * `webhook-signature` header of space-separated `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, one per
 * secret that currently signs (two during a rotation), so receivers verify with the `standardwebhooks` library.
 */

const PREFIX = 'whsec_'
const KEY_BYTES = 32

/** A new signing secret, `whsec_` and the base64 of 32 random bytes. */
export const newWebhookSecret = (): string => PREFIX + randomBytes(KEY_BYTES).toString('base64')

// The signature of one message under one secret: `v1,<base64>`.
function signatureOf(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64')
  const mac = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')
  return `v1,${mac}`
}

/** The `webhook-signature` header value: one signature per secret, space separated. */
export const signatureHeader = (secrets: string[], id: string, timestampSeconds: number, body: string): string =>
  secrets.map((s) => signatureOf(s, id, timestampSeconds, body)).join(' ')
