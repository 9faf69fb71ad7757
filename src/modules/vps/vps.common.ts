import { randomInt } from 'node:crypto'
import type { Db } from '../../db/database.js'
import { errors } from '../../errors.js'
import { HypervisorError, type OsImage } from '../../drivers/hypervisor/hypervisor.js'
import * as repo from './vps.repository.js'
import type { Vps } from './vps.repository.js'

/** A path id: digits only (anything else is no valid id). */
export const isId = (raw: string): boolean => /^\d{1,15}$/.test(raw)

/**
 * The VPS with this path id, of this account. A malformed id answers `No valid VPS ID provided`; an unknown id and
 * another account's VPS both answer `No access to this VPS` (the texts of the list-backups operation, used on every
 * VPS route), so no answer tells whether an id exists in another account.
 */
export async function ownedVps(db: Db, accountId: number, rawId: string): Promise<Vps> {
  if (!isId(rawId)) throw errors.noValidVpsId()
  const vps = await repo.findVps(db, accountId, Number(rawId))
  if (!vps) throw errors.noAccessToVps()
  return vps
}

/** An `image_id` as clients send it: the image's integer id (`1`, also as text `"1"`) or its slug (`debian-12`). */
export type ImageRef = number | string

/** The image an `image_id` names, or 400 `Unknown image_id` (slugs are never all digits, so the forms never clash). */
export function findImage(images: OsImage[], ref: ImageRef): OsImage {
  const image =
    typeof ref === 'number' || /^\d+$/.test(ref)
      ? images.find((i) => i.id === Number(ref))
      : images.find((i) => i.slug === ref.trim().toLowerCase())
  if (!image) throw errors.vpsUnknownImage()
  return image
}

/** Runs a hypervisor call, turning its refusal into a 400 that names it. */
export async function viaDriver<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn()
  } catch (err) {
    if (err instanceof HypervisorError) throw errors.vpsActionFailed(err.message)
    throw err
  }
}

const PASSWORD_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789'
/** A random password of 20 characters (about 116 bits). */
export const newPassword = (): string =>
  Array.from({ length: 20 }, () => PASSWORD_ALPHABET[randomInt(PASSWORD_ALPHABET.length)]).join('')

const pad = (n: number) => String(n).padStart(2, '0')
/** `DD-MM-YYYY HH:MM`, the VPC subnet's date form. */
export const dmyhm = (d: Date): string =>
  `${pad(d.getUTCDate())}-${pad(d.getUTCMonth() + 1)}-${d.getUTCFullYear()} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`
