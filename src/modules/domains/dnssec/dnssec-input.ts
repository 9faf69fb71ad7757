import { errors } from '../../../errors.js'
import { PUBLIC_KEY_FORMS } from '../../../lib/dns/dnssec.js'
import { InvariantError } from '../../../lib/invariant.js'

/**
 * The DNSSEC algorithms a key given for a zone served elsewhere may have: the published list (6, 8, 10, 12, 13, 15,
 * 16) and the others of RFC 8624 a registry still takes (5, 7, 14). The key is only stored and handed to the registry
 * with its DS: the zone's own nameservers sign with it, no back end here does. A zone served here is signed with a
 * key made here (ECDSA P-256, algorithm 13), whatever the request's key fields say.
 */
export const DNSSEC_ALGORITHMS = [5, 6, 7, 8, 10, 12, 13, 14, 15, 16]

/** The `dnssec` object of `PUT /domains/{domain}`. */
export interface DnssecInput {
  enabled?: boolean | number
  flags?: number
  alg?: number
  protocol?: number
  pubKey?: string
}

/** A DNSSEC key as stored. */
export interface DnssecKey {
  alg: number
  flags: number
  pubKey: string
}

/**
 * What a `dnssec` object asks for: `enabled` says it when given; without it, key fields turn DNSSEC on (as the
 * API's clients document) and an object without them (`{}`) changes nothing.
 */
export function dnssecIntent(input: DnssecInput): 'on' | 'off' | 'unchanged' {
  if (input.enabled !== undefined) return input.enabled === true || input.enabled === 1 ? 'on' : 'off'
  const keyFields = [input.flags, input.alg, input.protocol, input.pubKey]
  return keyFields.some((v) => v !== undefined) ? 'on' : 'unchanged'
}

/** The key given for a zone served elsewhere, checked: flags, an allowed algorithm and a key of its form. */
export function givenDnssecKey(input: DnssecInput): DnssecKey {
  const { flags, alg, protocol, pubKey } = input
  if (flags !== 256 && flags !== 257) throw errors.dnssecFlags()
  if (alg === undefined || !DNSSEC_ALGORITHMS.includes(alg)) throw errors.dnssecAlgorithm(DNSSEC_ALGORITHMS)
  if (protocol !== undefined && protocol !== 3) throw errors.dnssecProtocol()
  const key = (pubKey ?? '').replace(/\s+/g, '')
  if (key.length < 16 || !/^[A-Za-z0-9+/]+={0,2}$/.test(key)) throw errors.dnssecPubKey()
  const form = PUBLIC_KEY_FORMS[alg]
  if (form === undefined) throw new InvariantError(`DNSSEC algorithm ${alg} is allowed but has no key form`)
  if (!form.valid(Buffer.from(key, 'base64'))) throw errors.dnssecPubKeyForm(alg, form.describe)
  return { alg, flags, pubKey: key }
}
