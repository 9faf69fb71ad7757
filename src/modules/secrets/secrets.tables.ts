/** The secret-key check: a known value sealed with the current secret key. */
export interface SecretTables {
  secret_key_checks: SecretKeyChecksTable
}

export interface SecretKeyChecksTable {
  /** `secret-key`: one row. */
  name: string
  /** A SecretBox envelope of a known text. */
  value: string
  updated_at: string
}
