import type { Kysely } from 'kysely'
import type SshPk from 'sshpk'
import type { Clock } from '../../clock.js'
import { iso, ymdhm } from '../../clock.js'
import type { DB } from '../../db/tables.js'
import { isUniqueViolation } from '../../db/errors.js'
import { errors } from '../../errors.js'
import * as repo from './vps.repository.js'
import type { VpsSshKey } from './vps.tables.js'
import { isId } from './vps.common.js'
import { lazyRequire } from '../../lazy-require.js'
import type { DryRun } from '../../lib/dry-run.js'

/** sshpk, loaded with the first key added, not at start. */
const sshpk = lazyRequire<typeof SshPk>('sshpk')

/** What SshKeysService is built on. */
export interface SshKeysServiceDeps {
  db: Kysely<DB>
  clock: Clock
}

/** The account's SSH public keys, installed on a VPS at order or reinstall. */
export class SshKeysService {
  private readonly db: Kysely<DB>
  private readonly clock: Clock

  constructor(deps: SshKeysServiceDeps) {
    this.db = deps.db
    this.clock = deps.clock
  }

  async list(accountId: number) {
    return (await repo.listSshKeys(this.db, accountId)).map(sshKeyView)
  }

  /** Adds a public key: ssh-ed25519, ecdsa or ssh-rsa of at least 2048 bits; the same key twice → 400. */
  async add(accountId: number, name: string, publicKey: string, opts: DryRun = {}) {
    const text = publicKey.trim()
    if (!name.trim()) throw errors.vpsMissingName()
    const ssh = sshpk()
    let key: SshPk.Key
    try {
      if (text.includes('\n')) throw new Error('several lines')
      key = ssh.parseKey(text, 'ssh')
    } catch {
      throw errors.sshKeyInvalid()
    }
    if (!['ed25519', 'ecdsa', 'rsa'].includes(key.type)) throw errors.sshKeyType()
    if (key.type === 'rsa' && key.size < 2048) throw errors.sshKeyTooShort()
    const fingerprint = key.fingerprint('sha256').toString()
    if (await repo.findSshKeyByFingerprint(this.db, accountId, fingerprint)) throw errors.sshKeyDuplicate()
    const row = {
      account_id: accountId,
      name: name.trim(),
      public_key: text,
      fingerprint,
      key_type: key.type,
      bits: key.size,
      created_at: iso(this.clock.now()),
    }
    if (opts.dryRun) return sshKeyView({ ...row, id: 0 })
    try {
      return sshKeyView(await repo.insertSshKey(this.db, row))
    } catch (err) {
      if (isUniqueViolation(err)) throw errors.sshKeyDuplicate()
      throw err
    }
  }

  async delete(accountId: number, rawId: string, opts: DryRun = {}) {
    const id = isId(rawId) ? Number(rawId) : NaN
    if (opts.dryRun) {
      if (Number.isNaN(id) || (await repo.findSshKeys(this.db, accountId, [id])).length === 0)
        throw errors.sshKeyNotFound()
      return
    }
    if (Number.isNaN(id) || !(await repo.deleteSshKey(this.db, accountId, id))) throw errors.sshKeyNotFound()
  }

  /** The public keys with these ids, of this account; an id that is not → 400. */
  async publicKeys(accountId: number, ids: number[]): Promise<string[]> {
    const rows = await repo.findSshKeys(this.db, accountId, ids)
    for (const id of ids) if (!rows.some((r) => r.id === id)) throw errors.sshKeyUnknown(id)
    return rows.map((r) => r.public_key)
  }
}

const sshKeyView = (k: Omit<VpsSshKey, 'account_id'>) => ({
  id: k.id,
  name: k.name,
  public_key: k.public_key,
  fingerprint: k.fingerprint,
  type: k.key_type,
  bits: k.bits,
  created: ymdhm(new Date(k.created_at)),
})
