import { ACME_SEALED_COLUMNS } from '../../drivers/ca/acme.js'
import { CA_SEALED_COLUMNS } from '../../drivers/ca/builtin.js'
import type { SealedColumn } from '../../lib/secret-box.js'
import { ZONE_KEY_SEALED_COLUMNS } from '../domains/dnssec/zone-keys.js'
import { WEBHOOK_SEALED_COLUMNS } from '../webhooks/webhook-deliverer.js'

/**
 * Every column of the database that holds sealed values, whichever drivers a process has configured: the secret
 * key check aside, what `SecretsService` opens at start and re-seals on rotation. A new sealed column is added here
 * (test/secrets-rotation.test.ts fails on a sealed value in a column not listed).
 */
export const SEALED_COLUMNS: readonly SealedColumn[] = [
  ...CA_SEALED_COLUMNS,
  ...ACME_SEALED_COLUMNS,
  ...ZONE_KEY_SEALED_COLUMNS,
  ...WEBHOOK_SEALED_COLUMNS,
]
