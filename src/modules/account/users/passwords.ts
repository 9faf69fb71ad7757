import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto'

const scrypt = (password: string, salt: Buffer, keylen: number, opts: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) =>
    scryptCb(password, salt, keylen, opts, (err, key) => (err ? reject(err) : resolve(key))),
  )

// scrypt with N=2^15, r=8, p=1 (about 32 MiB, tens of milliseconds): the OWASP baseline.
const N = 32768
const R = 8
const P = 1
const KEYLEN = 32
const MAXMEM = 64 * 1024 * 1024

/** A salted scrypt hash in the self-describing form `scrypt$N$r$p$salt$hash` (base64url). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16)
  const key = await scrypt(password.normalize('NFC'), salt, KEYLEN, { N, r: R, p: P, maxmem: MAXMEM })
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64url')}$${key.toString('base64url')}`
}

/** True when `password` matches a hash made by hashPassword. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [kind, n, r, p, salt, hash] = stored.split('$')
  if (kind !== 'scrypt' || !hash) return false
  const expected = Buffer.from(hash, 'base64url')
  const key = await scrypt(password.normalize('NFC'), Buffer.from(salt, 'base64url'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: MAXMEM,
  })
  return timingSafeEqual(key, expected)
}

/** Why a password is too weak, or null when it is acceptable. */
export function passwordProblem(password: string, email: string): string | null {
  if ([...password].length < 10) return 'use at least 10 characters'
  if (password.length > 128) return 'use at most 128 characters'
  if (password.toLowerCase() === email.toLowerCase() || password.toLowerCase() === email.split('@')[0].toLowerCase())
    return 'it must differ from the e-mail address'
  if (new Set(password).size < 4) return 'use more different characters'
  return null
}
