import { Type, type TSchema } from 'typebox'
import { Envelope, PageQuery, Pagination } from '../../http/schemas.js'

/** Request and response schemas of the certificate operations. */

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()])

export const CertificateParams = Type.Object({
  id: Type.Integer({ minimum: 1, description: 'Certificate id' }),
})

export const CertificateListQuery = Type.Object(PageQuery)

const Product = Type.Object({
  id: Type.Integer(),
  product_id: Type.Integer({ description: 'The same as `id`: what POST /certificates/order takes as `product_id`' }),
  name: Type.String(),
  type: Type.String({ description: '`single`, `wildcard` or `multi_domain`' }),
  validation: Type.String({ description: '`DV`: domain validated' }),
  max_domains: Type.Integer({ description: 'Names a certificate may carry, the common name included' }),
  wildcard: Type.Boolean({ description: 'Whether `*.` names are allowed' }),
  duration_options: Type.Array(Type.Integer(), {
    description: 'The durations in years POST /certificates/order takes (default 1)',
  }),
  prices: Type.Array(
    Type.Object({
      duration: Type.Integer({ description: 'Years' }),
      price: Type.Number({ description: 'EUR for the whole duration, excluding VAT' }),
    }),
  ),
})

const productExample = {
  id: 1,
  product_id: 1,
  name: 'hostapi SSL',
  type: 'single',
  validation: 'DV',
  max_domains: 1,
  wildcard: false,
  duration_options: [1, 2],
  prices: [
    { duration: 1, price: 9.95 },
    { duration: 2, price: 19.9 },
  ],
}

export const ProductsResponse = Envelope(Type.Object({ products: Type.Array(Product) }), { products: [productExample] })

export const OrderBody = Type.Object({
  product_id: Type.Integer({ minimum: 1, description: 'From GET /certificates/products' }),
  duration: Type.Optional(
    Type.Integer({ minimum: 1, description: "Years, one of the product's `duration_options`; default 1" }),
  ),
})

export const OrderResponse = Envelope(
  Type.Object({
    order_id: Type.Integer({ description: '0 for `?test=1`' }),
    status: Type.String({ description: '`open`: the order is processed asynchronously (GET /orders/{order_id})' }),
    product_id: Type.Integer(),
    product: Type.String({ description: 'The product name' }),
    duration: Type.Integer({ description: 'Years' }),
    price: Type.Number({ description: 'EUR for the whole duration, excluding VAT' }),
  }),
  { order_id: 1042, status: 'open', product_id: 1, product: 'hostapi SSL', duration: 1, price: 9.95 },
)

const certificateStatus = Type.String({
  description:
    '`NEW` not requested yet · `PEN` waiting for validation and issuance · `ACT` active · `EXP` expired · `ERR` failed (may be requested again)',
})

const listItemFields = {
  id: Type.Integer(),
  product_id: Type.Integer(),
  product: Type.String(),
  common_name: Nullable(Type.String()),
  domain: Type.String({ description: 'The common name; empty for a package whose certificate was not requested yet' }),
  domains: Type.Array(Type.String(), { description: 'The common name first, then the other names' }),
  requested: Type.Boolean({ description: 'False for a package whose certificate has not been requested yet' }),
  certificate_status: certificateStatus,
  validation_method: Nullable(Type.String()),
  order_id: Nullable(Type.Integer()),
  created: Type.String({ description: '`YYYY-MM-DD HH:MM:SS`' }),
  valid_until: Nullable(Type.String({ description: '`YYYY-MM-DD HH:MM:SS`, once issued' })),
  end_date: Type.String({ description: '`YYYY-MM-DD`: the end of the paid period' }),
}

const listItemExample = {
  id: 7,
  product_id: 1,
  product: 'hostapi SSL',
  common_name: 'www.example.com',
  domain: 'www.example.com',
  domains: ['www.example.com'],
  requested: true,
  certificate_status: 'ACT',
  validation_method: 'dns',
  order_id: 1042,
  created: '2026-03-01 10:15:00',
  valid_until: '2027-04-02 10:16:05',
  end_date: '2027-03-01',
}

export const CertificateListResponse = Envelope(
  Type.Object({ certificates: Type.Array(Type.Object(listItemFields)), pagination: Pagination }),
  { certificates: [listItemExample], pagination: { page: 1, limit: 25, total: 1, total_pages: 1 } },
)

const Detail = Type.Object({
  ...listItemFields,
  duration: Type.Integer({ description: 'Years paid for' }),
  approver_email: Nullable(Type.String()),
  auto_setup_dns: Type.Boolean(),
  validation: Nullable(
    Type.Object({
      method: Type.String(),
      dns_records: Type.Array(
        Type.Object({
          type: Type.String(),
          name: Type.String(),
          value: Type.String(),
          auto_created: Type.Boolean({ description: 'hostapi wrote this record into your zone itself' }),
        }),
        { description: '`dns`: publish each TXT record' },
      ),
      http_files: Type.Array(Type.Object({ url: Type.String(), content: Type.String() }), {
        description: '`http`/`https`: serve each file',
      }),
      approver_email: Nullable(Type.String()),
    }),
  ),
  status_message: Nullable(Type.String({ description: 'Why the certificate is waiting or failed' })),
  warning: Nullable(
    Type.String({
      description:
        'While waiting for validation with `auto_setup_dns`: the TXT records hostapi could not write (their names ' +
        'lie in no zone of the account hosted here), to publish yourself; null otherwise',
    }),
  ),
  csr: Nullable(Type.String()),
  certificate: Nullable(Type.String({ description: 'PEM, once issued' })),
  intermediate_certificate: Nullable(Type.String({ description: 'PEM of the issuing CA, once issued' })),
  serial_number: Nullable(Type.String()),
  valid_from: Nullable(Type.String()),
  requested_at: Nullable(Type.String()),
  issued_at: Nullable(Type.String()),
})

const detailExample = {
  ...listItemExample,
  certificate_status: 'PEN',
  valid_until: null,
  duration: 1,
  approver_email: null,
  auto_setup_dns: true,
  validation: {
    method: 'dns',
    dns_records: [
      {
        type: 'TXT',
        name: '_pki-validation.www.example.com',
        value: 'q0H4m3Yb8bJt2WcKfS0v1xq6ZpN3r7Lk',
        auto_created: true,
      },
    ],
    http_files: [],
    approver_email: null,
  },
  status_message: 'Waiting for validation',
  warning: null,
  csr: '-----BEGIN CERTIFICATE REQUEST-----\nMIIC…\n-----END CERTIFICATE REQUEST-----\n',
  certificate: null,
  intermediate_certificate: null,
  serial_number: null,
  valid_from: null,
  requested_at: '2026-03-01 10:16:00',
  issued_at: null,
}

export const CertificateResponse = Envelope(Detail, detailExample)

export const CsrBody = Type.Object({
  common_name: Type.String({
    minLength: 1,
    maxLength: 253,
    description: 'Domain name, `*.` allowed (www.example.com)',
  }),
  organization: Type.String({ minLength: 1, maxLength: 64 }),
  email: Type.String({ minLength: 3, maxLength: 254 }),
  country: Type.String({ minLength: 2, maxLength: 2, description: 'ISO 3166 code (NL)' }),
  state: Type.String({ minLength: 1, maxLength: 128 }),
  locality: Type.String({ minLength: 1, maxLength: 128 }),
  unit: Type.Optional(Type.String({ maxLength: 64 })),
  bits: Type.Optional(
    Type.Union([Type.Literal(2048), Type.Literal(3072), Type.Literal(4096)], {
      description: 'RSA key size (default 2048)',
    }),
  ),
  key_type: Type.Optional(
    Type.Union([Type.Literal('rsa'), Type.Literal('ec')], { description: '`rsa` (default) or `ec` (ECDSA P-256)' }),
  ),
})

export const CsrResponse = Envelope(
  Type.Object({
    csr: Type.String({ description: 'PKCS#10 request, PEM' }),
    private_key: Type.String({ description: 'PKCS#8 private key, PEM; shown once, not stored' }),
  }),
  {
    csr: '-----BEGIN CERTIFICATE REQUEST-----\nMIIC…\n-----END CERTIFICATE REQUEST-----\n',
    private_key: '-----BEGIN PRIVATE KEY-----\nMIIE…\n-----END PRIVATE KEY-----\n',
  },
)

export const RequestBody = Type.Object({
  csr: Type.String({ minLength: 1, maxLength: 65536, description: 'PKCS#10 request, PEM' }),
  validation_method: Type.Union([
    Type.Literal('dns'),
    Type.Literal('http'),
    Type.Literal('https'),
    Type.Literal('email'),
  ]),
  approver_email: Type.Optional(
    Type.String({
      maxLength: 254,
      description: 'Required for `email`: admin@, administrator@, hostmaster@, postmaster@ or webmaster@ the domain',
    }),
  ),
  auto_setup_dns: Type.Optional(
    Type.Boolean({ description: '`dns`: write the validation TXT records into your zones hosted here' }),
  ),
})
