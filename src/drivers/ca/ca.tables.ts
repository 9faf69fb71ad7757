import type { Generated, Selectable } from 'kysely'

/** The built-in certificate authority's keys and the ACME accounts, made once and shared by every instance. */
export interface CaTables {
  ca_authorities: CaAuthoritiesTable
  acme_accounts: AcmeAccountsTable
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

export interface AcmeAccountsTable {
  id: Generated<number>
  /** The ACME server's directory; unique, so two instances registering at once keep one account. */
  directory_url: string
  /** The account's PKCS#8 PEM private key, sealed with the secret key. */
  account_key: string
  /** The account's URL at the server, once registered. */
  account_url: string | null
  email: string | null
  created_at: string
}

export type AcmeAccount = Selectable<AcmeAccountsTable>
