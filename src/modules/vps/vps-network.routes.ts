import { Type, type TSchema } from 'typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { DryRunQuery, dry } from '../../http/dry-run.js'
import { Envelope, OkMessage, ok, okMessage } from '../../http/schemas.js'
import * as S from './vps.schemas.js'
import { errorsFor } from '../../http/error-responses.js'
import { errors } from '../../errors.js'

const TAGS = ['VPS']

/** The account's floating IPs: reserving, attaching to a VPS, detaching and deleting them. */
export const vpsFloatingIpRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const env = <T extends TSchema>(t: T, example: unknown) => ({ 200: Envelope(t, example) })

  app.get(
    '/vps/floating-ips',
    {
      config: { area: 'vps' },
      schema: {
        operationId: 'listFloatingIps',
        tags: TAGS,
        summary: 'List floating IPs',
        response: env(Type.Object({ floating_ips: Type.Array(S.FloatingIp) }), { floating_ips: [S.floatingExample] }),
      },
    },
    async (req) => ok({ floating_ips: await app.services.vps.network.listFloatingIps(req.caller.accountId) }),
  )

  app.post(
    '/vps/floating-ips',
    {
      config: { area: 'vps' },
      schema: {
        operationId: 'reserveFloatingIp',
        querystring: DryRunQuery,
        tags: TAGS,
        summary: 'Reserve a floating IP',
        body: S.FloatingReserveBody,
        response: env(S.FloatingIp, { ...S.floatingExample, vps_id: null }),
      },
    },
    async (req) =>
      ok(
        await app.services.vps.network.reserveFloatingIp(req.caller.accountId, req.body.location, dry(req)),
        'Floating IP reserved',
      ),
  )

  app.put(
    '/vps/floating-ips/:id/attach',
    {
      config: { area: 'vps', fixture: 'vpsFloatingIp' },
      schema: {
        operationId: 'attachFloatingIp',
        querystring: DryRunQuery,
        tags: TAGS,
        summary: 'Attach a floating IP to a VPS',
        description:
          "Unknown or another account's floating IP → 404 `Floating IP not found`; the VPS must be in the same location.",
        params: S.IdParams,
        body: S.FloatingAttachBody,
        response: env(S.FloatingIp, S.floatingExample),
      },
    },
    async (req) =>
      ok(
        await app.services.vps.network.attachFloatingIp(req.caller.accountId, req.params.id, req.body.vps_id, dry(req)),
        'Floating IP attached',
      ),
  )

  app.put(
    '/vps/floating-ips/:id/detach',
    {
      config: { area: 'vps', fixture: 'vpsFloatingIp' },
      schema: {
        operationId: 'detachFloatingIp',
        querystring: DryRunQuery,
        tags: TAGS,
        summary: 'Detach a floating IP',
        params: S.IdParams,
        response: env(S.FloatingIp, { ...S.floatingExample, vps_id: null }),
      },
    },
    async (req) =>
      ok(
        await app.services.vps.network.detachFloatingIp(req.caller.accountId, req.params.id, dry(req)),
        'Floating IP detached',
      ),
  )

  app.delete(
    '/vps/floating-ips/:id',
    {
      config: { area: 'vps', fixture: 'vpsFloatingIp' },
      schema: {
        operationId: 'deleteFloatingIp',
        querystring: DryRunQuery,
        tags: TAGS,
        summary: 'Release a floating IP',
        description: 'An attached floating IP cannot be deleted: detach it first.',
        params: S.IdParams,
        response: { 200: OkMessage, ...errorsFor('vps', { 404: [errors.floatingIpNotFound()] }) },
      },
    },
    async (req) => {
      await app.services.vps.network.deleteFloatingIp(req.caller.accountId, req.params.id, dry(req))
      return okMessage('Floating IP deleted')
    },
  )
}

/** A VPS's firewall: its rules and their replacement. */
export const vpsFirewallRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const env = <T extends TSchema>(t: T, example: unknown) => ({ 200: Envelope(t, example) })

  app.get(
    '/vps/:id/firewall',
    {
      config: { area: 'vps', fixture: 'vps' },
      schema: {
        operationId: 'getVpsFirewall',
        tags: TAGS,
        summary: 'Get the firewall',
        params: S.VpsIdParams,
        response: env(S.Firewall, S.firewallExample),
      },
    },
    async (req) => ok(await app.services.vps.network.getFirewall(req.caller.accountId, req.params.id)),
  )

  app.put(
    '/vps/:id/firewall',
    {
      config: { area: 'vps', fixture: 'vpsFirewall' },
      schema: {
        operationId: 'updateVpsFirewall',
        querystring: DryRunQuery,
        tags: TAGS,
        summary: 'Replace the firewall',
        description: 'Inbound rules, at most 50.',
        params: S.VpsIdParams,
        body: S.FirewallBody,
        response: env(S.Firewall, S.firewallExample),
      },
    },
    async (req) =>
      ok(
        await app.services.vps.network.setFirewall(
          req.caller.accountId,
          req.params.id,
          req.body.enabled,
          req.body.rules,
          dry(req),
        ),
        'Firewall updated',
      ),
  )
}

/** The private network (VPC) of a VPS's host and its subnets. */
export const vpsVpcRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const env = <T extends TSchema>(t: T, example: unknown) => ({ 200: Envelope(t, example) })

  app.get(
    '/vps/:id/vpc',
    {
      config: { area: 'vps', fixture: 'vps' },
      schema: {
        operationId: 'getVpc',
        tags: TAGS,
        summary: "Get the VPC on the VPS's host",
        description: 'No VPC on the host → 404.',
        params: S.VpsIdParams,
        response: env(S.Vpc, {
          id: 4,
          name: 'private',
          host: 'ams-hv01',
          created: '2026-03-01 10:15',
          subnets: [S.subnetExample],
        }),
      },
    },
    async (req) => ok(await app.services.vps.network.getVpc(req.caller.accountId, req.params.id)),
  )

  app.post(
    '/vps/:id/vpc',
    {
      config: { area: 'vps', fixture: 'vpsVpc' },
      schema: {
        operationId: 'createVpc',
        querystring: DryRunQuery,
        tags: TAGS,
        summary: "Create a VPC on the VPS's host",
        description: 'One VPC per host per account.',
        params: S.VpsIdParams,
        body: S.VpcBody,
        response: env(S.Vpc, { id: 4, name: 'private', host: 'ams-hv01', created: '2026-03-01 10:15', subnets: [] }),
      },
    },
    async (req) =>
      ok(
        await app.services.vps.network.createVpc(req.caller.accountId, req.params.id, req.body.name, dry(req)),
        'VPC created',
      ),
  )

  app.post(
    '/vps/:id/vpc/subnets',
    {
      config: { area: 'vps', fixture: 'vpsSubnet' },
      schema: {
        operationId: 'addVpcSubnet',
        querystring: DryRunQuery,
        tags: TAGS,
        summary: 'Add a VPC subnet',
        description:
          "Adds a private subnet to the account's VPC; the VPS must be on the VPC's host. Omitted gateway: the first usable address; " +
          'omitted DHCP range: the second to the last usable address. Private ranges only, no overlap with other subnets of the VPC.',
        params: S.VpsIdParams,
        body: S.SubnetBody,
        response: env(S.Subnet, S.subnetExample),
      },
    },
    async (req) =>
      ok(
        await app.services.vps.network.addSubnet(req.caller.accountId, req.params.id, req.body, dry(req)),
        'Subnet created',
      ),
  )

  app.put(
    '/vps/:id/vpc/subnets/:subnet_id',
    {
      config: { area: 'vps', fixture: 'vpsAttach' },
      schema: {
        operationId: 'attachVpcSubnet',
        querystring: DryRunQuery,
        tags: TAGS,
        summary: 'Attach the VPS to a subnet',
        description:
          "Returns the VPS's private address from the DHCP range (the same one again when attached already). Unknown subnet → 404 `S.Subnet not found`.",
        params: S.SubnetParams,
        response: env(S.Attachment, {
          vps_id: 501,
          subnet_id: 7,
          address: '10.10.0.2',
          cidr: '10.10.0.0/24',
          gateway: '10.10.0.1',
        }),
      },
    },
    async (req) =>
      ok(
        await app.services.vps.network.attachSubnet(
          req.caller.accountId,
          req.params.id,
          req.params.subnet_id,
          dry(req),
        ),
        'Subnet attached',
      ),
  )
}
