import { Type, type TSchema } from 'typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { DryRunQuery, dry } from '../../http/dry-run.js'
import { Envelope, OkMessage, ok, okMessage } from '../../http/schemas.js'
import * as S from './vps.schemas.js'
import { errorsFor } from '../../http/error-responses.js'
import { errors } from '../../errors.js'

const TAGS = ['VPS']

/** SSH keys of the account. */
export const sshKeysRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const env = <T extends TSchema>(t: T, example: unknown) => ({ 200: Envelope(t, example) })

  app.get(
    '/vps/ssh-keys',
    {
      config: { area: 'vps' },
      schema: {
        operationId: 'listSshKeys',
        tags: TAGS,
        summary: 'List SSH keys',
        response: env(Type.Object({ ssh_keys: Type.Array(S.SshKey) }), { ssh_keys: [S.sshKeyExample] }),
      },
    },
    async (req) => ok({ ssh_keys: await app.services.vps.sshKeys.list(req.caller.accountId) }),
  )

  app.post(
    '/vps/ssh-keys',
    {
      config: { area: 'vps' },
      schema: {
        operationId: 'addSshKey',
        querystring: DryRunQuery,
        tags: TAGS,
        summary: 'Add an SSH key',
        description:
          'The key is parsed and checked (ssh-ed25519, ecdsa, ssh-rsa ≥ 2048 bits); the same key twice → 400.',
        body: S.SshKeyBody,
        response: env(S.SshKey, S.sshKeyExample),
      },
    },
    async (req) =>
      ok(
        await app.services.vps.sshKeys.add(req.caller.accountId, req.body.name, req.body.public_key, dry(req)),
        'SSH key added',
      ),
  )

  app.delete(
    '/vps/ssh-keys/:id',
    {
      config: { area: 'vps', fixture: 'vpsSshKey' },
      schema: {
        operationId: 'deleteSshKey',
        querystring: DryRunQuery,
        tags: TAGS,
        summary: 'Delete an SSH key',
        description: "Unknown or another account's key → 404 `SSH key not found`.",
        params: S.IdParams,
        response: { 200: OkMessage, ...errorsFor('vps', { 404: [errors.sshKeyNotFound()] }) },
      },
    },
    async (req) => {
      await app.services.vps.sshKeys.delete(req.caller.accountId, req.params.id, dry(req))
      return okMessage('SSH key deleted')
    },
  )
}
