import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { Type } from 'typebox'
import { Envelope, OkMessage, PageQuery, Pagination, ok, okMessage } from '../../http/schemas.js'
import { adminErrors } from '../../http/error-responses.js'
import { centsOf } from '../../lib/money.js'
import { Image } from '../vps/vps.schemas.js'
import * as S from './operator.schemas.js'

const admin = { admin: true } as const
const ExtensionPrices = Type.Object({
  extension: Type.String(),
  register_price: Type.String(),
  renew_price: Type.String(),
  transfer_price: Type.String(),
})
const ExtensionsReply = Envelope(Type.Object({ extensions: Type.Array(ExtensionPrices), pagination: Pagination }))

/** The catalogue: the extensions on offer with their prices and terms. */
export const adminCatalogRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const s = app.services

  app.get(
    '/extensions',
    {
      config: admin,
      schema: {
        operationId: 'adminListExtensions',
        tags: ['Catalogue'],
        summary: 'List the extensions on offer with their prices',
        querystring: Type.Object(PageQuery),
        response: { 200: ExtensionsReply, ...adminErrors },
      },
    },
    async (req) => ok(await s.extensions.list(req.query)),
  )

  app.put(
    '/extensions/:extension',
    {
      config: admin,
      schema: {
        operationId: 'adminSetExtension',
        tags: ['Catalogue'],
        summary: 'Offer an extension or change its prices and terms',
        params: S.ExtensionParams,
        body: S.ExtensionBody,
        response: { 200: S.ExtensionReply, ...adminErrors },
      },
    },
    async (req) => {
      const b = req.body
      const ext = await s.adminCatalog.setExtension(req.params.extension, {
        registerCents: centsOf(b.register_price),
        renewCents: centsOf(b.renew_price),
        transferCents: centsOf(b.transfer_price),
        minPeriod: b.min_period,
        maxPeriod: b.max_period,
        supportsDnssec: b.supports_dnssec,
        supportsPrivacy: b.supports_privacy,
        requiresAuthCode: b.requires_auth_code,
      })
      return ok(await s.extensions.get(ext), 'Extension saved')
    },
  )

  app.delete(
    '/extensions/:extension',
    {
      config: admin,
      schema: {
        operationId: 'adminDeleteExtension',
        tags: ['Catalogue'],
        summary: 'Stop offering an extension',
        params: S.ExtensionParams,
        response: { 200: OkMessage, ...adminErrors },
      },
    },
    async (req) => {
      await s.adminCatalog.deleteExtension(req.params.extension)
      return okMessage('Extension removed')
    },
  )
}

/** The names the built-in registry treats apart: premium names with their prices, reserved names. */
export const adminNameRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const s = app.services
  app.get(
    '/premium-names',
    {
      config: admin,
      schema: {
        operationId: 'adminListPremiumNames',
        tags: ['Catalogue'],
        summary: 'List the premium names of the built-in registry',
        response: { 200: S.PremiumListReply, ...adminErrors },
      },
    },
    async () => ok({ premium_names: await s.adminCatalog.premiumNames() }),
  )

  app.put(
    '/premium-names/:name',
    {
      config: admin,
      schema: {
        operationId: 'adminSetPremiumName',
        tags: ['Catalogue'],
        summary: 'Make a name premium, or change its prices',
        params: S.PremiumParams,
        body: S.PremiumBody,
        response: { 200: S.PremiumReply, ...adminErrors },
      },
    },
    async (req) => {
      const { register_price, renew_price } = req.body
      return ok(
        await s.adminCatalog.setPremium(req.params.name, centsOf(register_price), centsOf(renew_price)),
        'Premium name saved',
      )
    },
  )

  app.delete(
    '/premium-names/:name',
    {
      config: admin,
      schema: {
        operationId: 'adminDeletePremiumName',
        tags: ['Catalogue'],
        summary: 'Give a premium name its standard price again',
        params: S.PremiumParams,
        response: { 200: OkMessage, ...adminErrors },
      },
    },
    async (req) => {
      await s.adminCatalog.deletePremium(req.params.name)
      return okMessage('Premium name removed')
    },
  )

  app.get(
    '/reserved-names',
    {
      config: admin,
      schema: {
        operationId: 'adminListReservedNames',
        tags: ['Catalogue'],
        summary: 'List the names the built-in registry refuses to register',
        response: { 200: S.ReservedListReply, ...adminErrors },
      },
    },
    async () => ok({ reserved_names: await s.adminCatalog.reservedNames() }),
  )

  app.put(
    '/reserved-names/:name',
    {
      config: admin,
      schema: {
        operationId: 'adminReserveName',
        tags: ['Catalogue'],
        summary: 'Reserve a name: nobody can register it (availability says unavailable)',
        params: S.PremiumParams,
        body: S.ReservedBody,
        response: { 200: S.ReservedReply, ...adminErrors },
      },
    },
    async (req) => ok(await s.adminCatalog.reserve(req.params.name, req.body?.reason ?? ''), 'Name reserved'),
  )

  app.delete(
    '/reserved-names/:name',
    {
      config: admin,
      schema: {
        operationId: 'adminUnreserveName',
        tags: ['Catalogue'],
        summary: 'Release a reserved name',
        params: S.PremiumParams,
        response: { 200: OkMessage, ...adminErrors },
      },
    },
    async (req) => {
      await s.adminCatalog.unreserve(req.params.name)
      return okMessage('Name released')
    },
  )
}

/** The VPS catalogue: the OS images the hypervisor offers. */
export const adminVpsRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const s = app.services

  app.get(
    '/vps/images',
    {
      config: admin,
      schema: {
        operationId: 'adminListVpsImages',
        tags: ['VPS'],
        summary: 'The OS images the hypervisor offers',
        response: { 200: Envelope(Type.Object({ images: Type.Array(Image) })), ...adminErrors },
      },
    },
    async () => ok({ images: await s.vps.images() }),
  )
}
