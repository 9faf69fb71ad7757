import { Type } from 'typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { DryRunQuery, dry } from '../../http/dry-run.js'
import { Envelope, ok } from '../../http/schemas.js'
import { okJson, sendJson } from '../../http/json-reply.js'
import {
  Image,
  ReverseDnsBody,
  VpsDetail,
  VpsIdParams,
  VpsListItem,
  vpsDetailExample,
  vpsListExample,
} from './vps.schemas.js'

/** The account's VPS and the OS images they can run. */
export const vpsListRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const vps = () => app.services.vps

  app.get(
    '/vps',
    {
      config: { area: 'vps', cache: true },
      schema: {
        operationId: 'listVps',
        tags: ['VPS'],
        summary: 'List VPS',
        response: { 200: Envelope(Type.Object({ vps: Type.Array(VpsListItem) }), vpsListExample) },
      },
    },
    async (req, reply) => sendJson(reply, okJson(await vps().list(req.caller.accountId))),
  )

  app.get(
    '/vps/images',
    {
      config: { area: 'vps' },
      schema: {
        operationId: 'listVpsImages',
        tags: ['VPS'],
        summary: 'List available OS images',
        response: {
          200: Envelope(Type.Object({ images: Type.Array(Image) }), {
            images: [{ id: 1, slug: 'debian-12', name: 'Debian 12 (Bookworm)', family: 'debian', version: '12' }],
          }),
        },
      },
    },
    async () => ok({ images: await vps().images() }),
  )
}

/** One VPS: its details and the reverse DNS of its addresses. */
export const vpsRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const vps = () => app.services.vps

  app.get(
    '/vps/:id',
    {
      config: { area: 'vps', fixture: 'vps' },
      schema: {
        operationId: 'getVps',
        tags: ['VPS'],
        summary: 'Get VPS details',
        params: VpsIdParams,
        response: { 200: Envelope(VpsDetail, vpsDetailExample) },
      },
    },
    async (req) => ok(await vps().details(req.caller.accountId, req.params.id)),
  )

  app.put(
    '/vps/:id',
    {
      config: { area: 'vps', fixture: 'vpsReverse' },
      schema: {
        operationId: 'updateVps',
        querystring: DryRunQuery,
        tags: ['VPS'],
        summary: "Update reverse DNS of the VPS's addresses",
        params: VpsIdParams,
        body: ReverseDnsBody,
        response: { 200: Envelope(VpsDetail, vpsDetailExample) },
      },
    },
    async (req) => {
      const entries = req.body['ip-addresses']
      const detail = await vps().updateReverseDns(req.caller.accountId, req.params.id, entries, dry(req))
      return ok(detail, 'Reverse DNS updated')
    },
  )
}
