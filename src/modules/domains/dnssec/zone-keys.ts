import type { Clock } from '../../../clock.js'
import { iso } from '../../../clock.js'
import type { Db } from '../../../db/database.js'
import type { ZoneSigningKey } from '../../../drivers/dns/dns.js'
import { ALG_ECDSAP256SHA256, FLAGS_KSK, generateZoneKey } from '../../../lib/dns/dnssec.js'
import { SecretBox, type SealedColumn } from '../../../lib/secret-box.js'
import { deleteZoneKey, findZoneKeys, insertZoneKeyIfAbsent } from './zone-keys.repository.js'

/** A zone's signing key as the domains area shows it: the DNSKEY fields, the public key in base64. */
export interface ZonePublicKey {
  algorithm: number
  flags: number
  publicKey: string
}

/** The sealing context of a zone key: table, column and domain, so a key copied to another row does not open. */
const keyContext = (domainId: number) => `dnssec_zone_keys.private_key/${domainId}`

/** The zones' sealed signing keys. */
export const ZONE_KEY_SEALED_COLUMNS: SealedColumn[] = [
  {
    table: 'dnssec_zone_keys',
    column: 'private_key',
    reads: ['domain_id'],
    context: (row) => keyContext(Number(row.domain_id)),
  },
]

// The zone port reads the stored keys through this module.

/** A stored zone key with its private key opened, as the DNS driver gets it through the zone port. */
export function openZoneKey(
  box: SecretBox,
  row: { domain_id: number; algorithm: number; flags: number; private_key: string },
): ZoneSigningKey {
  const privateKeyPem = SecretBox.isSealed(row.private_key)
    ? box.open(row.private_key, keyContext(row.domain_id))
    : row.private_key
  return { privateKeyPem, algorithm: row.algorithm, flags: row.flags }
}

/** What ZoneKeys is built on. */
export interface ZoneKeysDeps {
  db: Db
  clock: Clock
  box: SecretBox
}

/**
 * The DNSSEC signing keys of the zones hostapi serves (one per domain, ECDSA P-256, in `dnssec_zone_keys`), their
 * private keys sealed with the secret key.
 */
export class ZoneKeys {
  private readonly db: Db
  private readonly clock: Clock
  private readonly box: SecretBox

  constructor(deps: ZoneKeysDeps) {
    this.db = deps.db
    this.clock = deps.clock
    this.box = deps.box
  }

  /** The public part of a domain's key, or undefined when it has none; `db` may be a transaction. */
  async find(domainId: number, db: Db = this.db): Promise<ZonePublicKey | undefined> {
    const [row] = await findZoneKeys(db, [domainId])
    return row && { algorithm: row.algorithm, flags: row.flags, publicKey: row.public_key }
  }

  /**
   * A new key for the domain (ECDSA P-256, flags 257), stored sealed; call in the transaction that turns DNSSEC on.
   * When the domain got a key meanwhile (two requests at once), that key is kept and returned.
   */
  async create(domainId: number, db: Db = this.db): Promise<ZonePublicKey> {
    const generated = generateZoneKey()
    const key = { algorithm: ALG_ECDSAP256SHA256, flags: FLAGS_KSK, publicKey: generated.publicKey.toString('base64') }
    await insertZoneKeyIfAbsent(db, {
      domain_id: domainId,
      algorithm: key.algorithm,
      flags: key.flags,
      public_key: key.publicKey,
      private_key: this.box.seal(generated.privateKeyPem, keyContext(domainId)),
      created_at: iso(this.clock.now()),
    })
    return (await this.find(domainId, db)) ?? key
  }

  /** Removes the domain's key (DNSSEC off); nothing happens when it has none. */
  async remove(domainId: number, db: Db = this.db): Promise<void> {
    await deleteZoneKey(db, domainId)
  }
}
