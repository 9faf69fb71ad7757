import type { Generated, Selectable } from 'kysely'

/** Certificate products and the certificate packages of accounts. */
export interface CertificateTables {
  certificate_products: CertificateProductsTable
  certificates: CertificatesTable
}

export type CertificateKind = 'single' | 'wildcard' | 'multi_domain'

export interface CertificateProductsTable {
  /** Fixed ids: the catalogue is seeded by the migration and referred to by clients. */
  id: number
  name: string
  kind: CertificateKind
  /** `DV`: the domain is validated, nothing about the organisation. */
  validation: string
  /** How many names (common name included) a certificate of this product may carry. */
  max_domains: number
  /** Whether `*.` names are allowed. */
  wildcard: number
  /** Price per year, excluding VAT. */
  price_cents: number
  /** JSON array of the durations (years) it can be ordered for. */
  durations: string
  active: number
}

/**
 * `NEW` ordered, not requested yet · `PEN` requested, waiting for validation and issuance ·
 * `ACT` issued · `ERR` validation or issuance failed (may be requested again). An issued certificate past its
 * `valid_until` is shown as `EXP`; it is not stored so.
 */
export type CertificateStatus = 'NEW' | 'PEN' | 'ACT' | 'ERR'

export interface CertificatesTable {
  id: Generated<number>
  account_id: number
  product_id: number
  /** The order and cart item that created the package; null for packages made otherwise (demo data). */
  order_id: number | null
  order_item_id: number | null
  /** Years paid for. */
  duration: number
  status: CertificateStatus
  common_name: string | null
  /** JSON array of every name: the common name first, then the other SANs. */
  domains: Generated<string>
  csr: string | null
  validation_method: string | null
  approver_email: string | null
  auto_setup_dns: Generated<number>
  /** JSON of the CA's challenge (records, files, approver). */
  challenge: string | null
  /** JSON array of the TXT record names hostapi wrote in the account's zones. */
  dns_auto_setup: Generated<string>
  /** How often the validation was checked since the last request. */
  validation_checks: Generated<number>
  certificate: string | null
  intermediate_certificate: string | null
  serial_number: string | null
  valid_from: string | null
  valid_until: string | null
  /** The end of the paid period. */
  ends_at: string
  /** Why the certificate is waiting or failed. */
  status_message: string | null
  requested_at: string | null
  issued_at: string | null
  created_at: string
  updated_at: string
}

/** A certificate product as stored (its durations as JSON text; certificates.repository decodes them). */
export type CertificateProductRow = Selectable<CertificateProductsTable>
/** A certificate package as stored (its JSON columns as text; certificates.repository decodes them). */
export type CertificateRow = Selectable<CertificatesTable>
