import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { ok } from '../../../http/schemas.js'
import { errorsFor } from '../../../http/error-responses.js'
import { DryRunQuery, dry } from '../../../http/dry-run.js'
import { ConfirmEmailBody, Profile, UpdateProfileBody } from './profile.schemas.js'
import { errors } from '../../../errors.js'

/** The account holder's profile. */
export const profileRoutes: FastifyPluginAsync = async (base) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.get(
    '/account/profile',
    {
      config: { area: 'account-profile' },
      schema: {
        operationId: 'getProfile',
        tags: ['Account'],
        summary: 'Get the account profile',
        response: { 200: Profile, ...errorsFor('account-profile') },
      },
    },
    async (req) => ok(await app.services.profile.get(req.caller.accountId)),
  )

  app.put(
    '/account/profile',
    {
      config: { area: 'account-profile' },
      schema: {
        operationId: 'updateProfile',
        tags: ['Account'],
        summary: 'Update the account profile',
        description:
          'A full replace: every field is required except `email_invoices` and `company_vat_number` (unchanged when omitted), ' +
          '`phone_country_code` (optional when `phone` is international, `+31612345678`) and ' +
          '`company`, which is read-only (accepted only with its current value). A new `email` is kept in `pending_email` and a ' +
          'verification code is mailed to it; it takes effect once confirmed with `POST /account/profile/confirm-email`.',
        querystring: DryRunQuery,
        body: UpdateProfileBody,
        response: {
          200: Profile,
          ...errorsFor('account-profile', {
            400: [
              errors.companyReadOnly(),
              errors.missingPhoneCountryCode(),
              errors.invalidPhone('phone', 'its country code +32 differs from phone_country_code +31'),
            ],
          }),
        },
      },
    },
    async (req) => {
      const r = await app.services.profile.update(req.caller.accountId, req.body, dry(req))
      return ok(
        r.profile,
        r.verificationSent
          ? 'Profile updated; a verification code was sent to the new e-mail address'
          : 'Profile updated',
      )
    },
  )

  app.post(
    '/account/profile/confirm-email',
    {
      config: { area: 'account-profile' },
      schema: {
        operationId: 'confirmProfileEmail',
        tags: ['Account'],
        summary: 'Confirm a new e-mail address with the mailed code',
        querystring: DryRunQuery,
        body: ConfirmEmailBody,
        response: { 200: Profile, ...errorsFor('account-profile', { 400: [errors.invalidEmailToken()] }) },
      },
    },
    async (req) =>
      ok(
        await app.services.profile.confirmEmail(req.caller.accountId, req.body.token, dry(req)),
        'E-mail address confirmed',
      ),
  )
}
