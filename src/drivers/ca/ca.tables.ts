import type { Generated, Selectable } from 'kysely'

/** The built-in certificate authority's keys, generated once and shared by every instance. */
export interface CaTables {
  ca_authorities: CaAuthoritiesTable
}

export interface CaAuthoritiesTable {
  id: Generated<number>
  /** Which CA this is (`builtin`); unique, so two instances starting at once keep one. */
  name: string
  root_cert: string
  /** PKCS#8 PEM, sealed with the secret key (a SecretBox envelope; plaintext PEM only in rows from before sealing). */
  root_key: string
  intermediate_cert: string
  /** PKCS#8 PEM, sealed like `root_key`. */
  intermediate_key: string
  created_at: string
}

export type CaAuthority = Selectable<CaAuthoritiesTable>
