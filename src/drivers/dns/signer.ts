import { createPrivateKey, type KeyObject } from 'node:crypto'
import {
  ALG_ECDSAP256SHA256,
  canonicalRdata,
  dnskeyRdata,
  keyTag,
  p256Point,
  rrsigLabels,
  rrsigSigningInput,
  signP256,
  type DnskeyData,
  type RrsigFields,
} from '../../lib/dns/dnssec.js'
import type { ZoneSigningKey } from './dns.js'

/** The RDATA of an RRSIG as `dns-packet` encodes it. */
export interface RrsigData extends RrsigFields {
  signature: Buffer
}

/** Signatures are valid from an hour back (clock skew) to a week ahead, and made again after a day. */
const BACKDATE_S = 3600
const VALIDITY_S = 7 * 86400
const RESIGN_AFTER_MS = 86400 * 1000
/** Bounds the signature cache, which the white-lie NSECs of random query names would otherwise grow. */
const MAX_CACHED = 20_000

/**
 * Signs the RRsets of one zone snapshot online with the zone's key (ECDSA P-256/SHA-256), caching each signature
 * for the life of the snapshot (one zone serial), so an RRset answered again is not signed again.
 */
export class ZoneSigner {
  /** The zone's DNSKEY. */
  readonly dnskey: DnskeyData
  readonly keyTag: number
  private readonly key: KeyObject
  private readonly cache = new Map<string, { rrsig: RrsigData; signedAt: number }>()

  constructor(
    private readonly apex: string,
    signing: ZoneSigningKey,
    private readonly now: () => number = Date.now,
  ) {
    if (signing.algorithm !== ALG_ECDSAP256SHA256)
      throw new Error(`DNSSEC algorithm ${signing.algorithm} not supported`)
    this.key = createPrivateKey(signing.privateKeyPem)
    this.dnskey = { flags: signing.flags, algorithm: signing.algorithm, publicKey: p256Point(this.key) }
    this.keyTag = keyTag(dnskeyRdata(this.dnskey))
  }

  /**
   * The RRSIG of one RRset: `signingOwner` is the name the records are stored at (the wildcard for a wildcard
   * answer), `originalTTL` the TTL they are stored with, `datas` their `dns-packet` RDATA; `cacheKey` tells apart
   * RRsets of the same owner and type (the NSEC of a white lie by its next name).
   */
  sign(signingOwner: string, type: string, originalTTL: number, datas: unknown[], cacheKey: string): RrsigData {
    const now = this.now()
    const key = `${signingOwner}\n${type}\n${originalTTL}\n${cacheKey}`
    const cached = this.cache.get(key)
    if (cached && now - cached.signedAt < RESIGN_AFTER_MS) return cached.rrsig
    const seconds = Math.floor(now / 1000)
    const fields: RrsigFields = {
      typeCovered: type,
      algorithm: this.dnskey.algorithm,
      labels: rrsigLabels(signingOwner),
      originalTTL,
      expiration: (seconds + VALIDITY_S) >>> 0,
      inception: (seconds - BACKDATE_S) >>> 0,
      keyTag: this.keyTag,
      signersName: this.apex,
    }
    const input = rrsigSigningInput(
      fields,
      signingOwner,
      datas.map((d) => canonicalRdata(type, d)),
    )
    const rrsig = { ...fields, signature: signP256(this.key, input) }
    if (this.cache.size >= MAX_CACHED) this.cache.clear()
    this.cache.set(key, { rrsig, signedAt: now })
    return rrsig
  }
}
