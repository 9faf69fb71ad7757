import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'

/**
 * Secrets at rest: AES-256-GCM under a 32-byte key-encryption key, in a versioned text envelope
 * `v1:<keyid>:<iv>:<tag>:<ciphertext>` (base64url parts). The key id (a hash prefix of the key) names the key
 * that sealed a value, so a value sealed under another configured key (the previous one, or the next one during a
 * rotation) is opened with it, and re-sealed with the current one on rotation.
 * `context` (the table and column a value lives in) is authenticated with it: a sealed value copied to
 * another place does not open there.
 */
export class SecretBox {
  /** The id of the key new values are sealed with. */
  readonly currentKeyId: string
  private readonly current: Buffer
  private readonly keys = new Map<string, Buffer>()

  /** `others`: keys that only open values (the previous key, or the next one, during a rotation). */
  constructor(current: Buffer, others: Buffer[] = []) {
    for (const k of [current, ...others])
      if (k.length !== KEY_BYTES) throw new SecretBoxError(`A secret key must be ${KEY_BYTES} bytes`)
    this.currentKeyId = keyId(current)
    this.current = current
    this.keys.set(this.currentKeyId, current)
    for (const k of others) if (!this.keys.has(keyId(k))) this.keys.set(keyId(k), k)
  }

  /** `plaintext` sealed with the current key, bound to `context`. */
  seal(plaintext: string, context: string): string {
    const iv = randomBytes(IV_BYTES)
    const cipher = createCipheriv('aes-256-gcm', this.current, iv)
    cipher.setAAD(Buffer.from(context, 'utf8'))
    const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
    return [VERSION, this.currentKeyId, b64(iv), b64(cipher.getAuthTag()), b64(ct)].join(':')
  }

  /** The plaintext of a value sealed by `seal` with the same `context`; throws SecretBoxError otherwise. */
  open(sealed: string, context: string): string {
    const env = parseEnvelope(sealed)
    if (!env) throw new SecretBoxError(`The value stored for ${context} is not a sealed secret`)
    const key = this.keys.get(env.keyId)
    if (!key)
      throw new SecretBoxError(
        `The value stored for ${context} was sealed with the secret key ${env.keyId}, which is not configured`,
      )
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, env.iv)
      decipher.setAAD(Buffer.from(context, 'utf8'))
      decipher.setAuthTag(env.tag)
      return Buffer.concat([decipher.update(env.ct), decipher.final()]).toString('utf8')
    } catch {
      throw new SecretBoxError(
        `The value stored for ${context} does not open with the secret key ${env.keyId}: it was changed or damaged`,
      )
    }
  }

  /** True when `value` is a sealed envelope (of any key); false for plaintext from before sealing. */
  static isSealed(value: string): boolean {
    return value.startsWith(`${VERSION}:`)
  }

  /** The ids of every configured key, the current one first. */
  get keyIds(): string[] {
    return [...this.keys.keys()]
  }

  /** True when `value` is sealed with the current key (nothing to re-seal). */
  isCurrent(value: string): boolean {
    return parseEnvelope(value)?.keyId === this.currentKeyId
  }
}

/** A value that cannot be sealed or opened with the configured keys; the message says which and why. */
export class SecretBoxError extends Error {}

/**
 * A column holding sealed values, described apart from the code that writes it, so that checking and re-sealing
 * every sealed value does not depend on which drivers a process has configured. Rows are found by `id`.
 */
export interface SealedColumn {
  table: string
  column: string
  /** The other columns `context` reads. */
  reads: readonly string[]
  /** The context the value of `row` is sealed with (see SecretBox.seal). */
  context(row: Record<string, unknown>): string
}

const VERSION = 'v1'
const KEY_BYTES = 32
const IV_BYTES = 12
const TAG_BYTES = 16

const b64 = (buf: Buffer): string => buf.toString('base64url')

function parseEnvelope(text: string): { keyId: string; iv: Buffer; tag: Buffer; ct: Buffer } | null {
  const parts = text.split(':')
  if (parts.length !== 5 || parts[0] !== VERSION || !/^[0-9a-f]{16}$/.test(parts[1])) return null
  if (!parts.slice(2).every((p) => /^[A-Za-z0-9_-]*$/.test(p))) return null
  const [iv, tag, ct] = parts.slice(2).map((p) => Buffer.from(p, 'base64url'))
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) return null
  return { keyId: parts[1], iv, tag, ct }
}

/** The id of a key: 16 hex digits of its SHA-256 (names the key in envelopes and messages, reveals nothing usable). */
export function keyId(key: Buffer): string {
  return createHash('sha256').update('hostapi secret key id\0').update(key).digest('hex').slice(0, 16)
}

/** A key written as 64 hex digits or as base64 (standard or url-safe) of 32 bytes; null when it is neither. */
export function parseSecretKey(text: string): Buffer | null {
  const t = text.trim()
  if (/^[0-9a-fA-F]{64}$/.test(t)) return Buffer.from(t, 'hex')
  if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(t)) return null
  const buf = Buffer.from(t.replace(/=$/, '').replace(/\+/g, '-').replace(/\//g, '_'), 'base64url')
  return buf.length === KEY_BYTES ? buf : null
}

/** A new random key, as base64 text (what `secret.key` holds). */
export function newSecretKeyText(): string {
  return randomBytes(KEY_BYTES).toString('base64')
}
