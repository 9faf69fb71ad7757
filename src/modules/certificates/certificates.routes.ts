import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { errorsFor } from '../../http/error-responses.js'
import { ok, pageOf } from '../../http/schemas.js'
import { DryRunQuery, dry } from '../../http/dry-run.js'
import {
  CertificateListQuery,
  CertificateListResponse,
  CertificateParams,
  CertificateResponse,
  CsrBody,
  CsrResponse,
  OrderBody,
  OrderResponse,
  ProductsResponse,
  RequestBody,
} from './certificates.schemas.js'
import { errors } from '../../errors.js'

const tags = ['Certificates']

/** The account's certificate packages, the products, ordering and CSR generation. */
export const certificatesRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const service = () => app.services.certificates

  app.get(
    '/certificates',
    {
      config: { area: 'certificates' },
      schema: {
        operationId: 'listCertificates',
        tags,
        summary: 'List certificates',
        description:
          "The account's certificate packages, newest first; `search` matches the names and the product. A package whose certificate was not requested yet shows `requested: false`.",
        querystring: CertificateListQuery,
        response: { 200: CertificateListResponse },
      },
    },
    async (req) => ok(await service().list(req.caller.accountId, pageOf(req.query), req.query.search)),
  )

  app.get(
    '/certificates/products',
    {
      config: { area: 'certificates' },
      schema: {
        operationId: 'listCertificateProducts',
        tags,
        summary: 'List certificate products',
        response: { 200: ProductsResponse },
      },
    },
    async () => ok({ products: await service().products() }),
  )

  app.post(
    '/certificates/order',
    {
      // Ordering needs the `order` permission, as every order of the API does.
      config: { area: 'order', idempotent: true },
      schema: {
        operationId: 'orderCertificate',
        tags,
        summary: 'Order a certificate',
        description:
          'Charges the product for `duration` years (default 1) and creates a certificate package (asynchronously, through the order). Answers the order: `order_id`, its `status` (`open` until processed), the product, the duration and the `price` charged (EUR for the whole duration, excluding VAT); the id of the package is `services[0].result.certificate_id` of GET /orders/{order_id} once processed. Request its certificate with POST /certificates/{id}/request. `?test=1`: checks the order and answers `order_id` 0 without ordering or charging.',
        querystring: DryRunQuery,
        body: OrderBody,
        response: { 200: OrderResponse },
      },
    },
    async (req) => {
      return ok(await service().order(req.caller.accountId, req.body, dry(req)))
    },
  )

  app.post(
    '/certificates/csr',
    {
      config: { area: 'certificates' },
      schema: {
        operationId: 'generateCsr',
        tags,
        summary: 'Generate a CSR',
        description:
          'Generates a private key (RSA 2048/3072/4096 or ECDSA P-256) and a PKCS#10 request for `common_name`. The private key is returned once and not stored. ' +
          'Nothing is stored either way, so `?test=1` answers the same.',
        querystring: DryRunQuery,
        body: CsrBody,
        response: { 200: CsrResponse },
      },
    },
    async (req) => ok(await service().generateCsr(req.body)),
  )
}

/** One certificate package: its details and the request (or reissue) of its certificate. */
export const certificateRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const service = () => app.services.certificates

  app.get(
    '/certificates/:id',
    {
      config: { area: 'certificates', fixture: 'certificate' },
      schema: {
        operationId: 'getCertificate',
        tags,
        summary: 'Get a certificate',
        description: '`certificate` and `intermediate_certificate` (PEM) appear once `certificate_status` is `ACT`.',
        params: CertificateParams,
        response: { 200: CertificateResponse, ...errorsFor('certificates', { 404: [errors.certificateNotFound()] }) },
      },
    },
    async (req) => ok(await service().get(req.caller.accountId, req.params.id)),
  )

  app.post(
    '/certificates/:id/request',
    {
      config: { area: 'certificates', fixture: 'certificateRequest' },
      schema: {
        operationId: 'requestCertificate',
        tags,
        summary: 'Request a certificate',
        description:
          'Requests the certificate of a package for the names of `csr` (common name and subjectAltNames). `dns` validation: publish the ' +
          'TXT records listed under `validation.dns_records`, or set `auto_setup_dns` to have hostapi write them into your zones hosted here. ' +
          '`http`/`https`: serve the files under `validation.http_files`. `email`: `approver_email` is required. The certificate is issued ' +
          'as soon as the validation is met; validation is checked again, backing off up to hourly, for 7 days. An issued certificate ' +
          'can be requested again (a reissue); it stays in place until the new one is issued. `?test=1`: checks ' +
          'everything and answers the certificate as it would be, storing and writing nothing. A name in a zone hostapi ' +
          'hosts for another account is refused (400 `<name> lies in a zone of another account`), and not issued when ' +
          "the zone is another account's by the time of validation.",
        params: CertificateParams,
        querystring: DryRunQuery,
        body: RequestBody,
        response: { 200: CertificateResponse, ...errorsFor('certificates', { 404: [errors.certificateNotFound()] }) },
      },
    },
    async (req) =>
      ok(await service().request(req.caller.accountId, req.params.id, req.body, dry(req)), 'Certificate requested'),
  )
}
