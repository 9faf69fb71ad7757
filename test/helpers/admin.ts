import { createHash, generateKeyPairSync } from 'node:crypto'
import sshpk from 'sshpk'
import type { Dialect } from '../../src/db/database.js'
import { startTestApp, type TestAccount, type TestApp } from './app.js'

/** The answer to an admin route without a valid admin token. */
export const NO_TOKEN = { status: 401, status_description: 'No valid admin token set' }
/** The answer to a customer route without a valid API key. */
export const NO_KEY = { status: 401, status_description: 'No valid API key set' }

/** A fresh public key of `type` (ed25519 unless told) in OpenSSH form. */
export const sshKey = (type: 'ed25519' | 'rsa' | 'ec' = 'ed25519', bits = 2048, comment = 'test') => {
  const { publicKey } =
    type === 'rsa'
      ? generateKeyPairSync('rsa', {
          modulusLength: bits,
          publicKeyEncoding: { type: 'spki', format: 'pem' },
          privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
        })
      : type === 'ec'
        ? generateKeyPairSync('ec', {
            namedCurve: 'P-256',
            publicKeyEncoding: { type: 'spki', format: 'pem' },
            privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
          })
        : generateKeyPairSync('ed25519', {
            publicKeyEncoding: { type: 'spki', format: 'pem' },
            privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
          })
  return `${sshpk.parseKey(publicKey, 'pem').toString('ssh')} ${comment}`
}

/** The OpenSSH SHA256 fingerprint, computed independently of the server: base64 of the SHA-256 of the key blob, unpadded. */
export const fingerprintOf = (line: string) =>
  `SHA256:${createHash('sha256')
    .update(Buffer.from(line.split(' ')[1], 'base64'))
    .digest('base64')
    .replace(/=+$/, '')}`

/** A test app for the admin API on the main listener, with an admin token and one tenant (`Tenant A`). */
export async function startAdminTestApp(dialect: Dialect): Promise<{ t: TestApp; token: string; a: TestAccount }> {
  // Every admin route with wrong credentials from one address on purpose: the failed-credential throttle is off here.
  const t = await startTestApp(dialect, { env: { HOSTAPI_AUTH_FAIL_LIMIT: '0' } })
  const token = (await t.ctx.services.admin.createToken('test')).token
  const a = await t.account('Tenant A')
  return { t, token, a }
}
