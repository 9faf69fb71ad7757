import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import type { Clock } from '../../clock.js'
import type { Config } from '../../config/config.js'
import type { DB } from '../../db/tables.js'
import type { Mailer } from '../mail/mail.service.js'
import type { PaymentsDriver } from '../../drivers/payments/payments.js'
import type { JobRunner } from '../../jobs/runner.js'
import type { IamService } from '../iam/iam.service.js'
import { InvoicesService } from './invoices/invoices.service.js'
import { PaymethodsService } from './paymethods/paymethods.service.js'
import { ProfileService } from './profile/profile.service.js'
import { TicketsService } from './tickets/tickets.service.js'
import { SanitisePool } from './tickets/sanitise-pool.js'
import { UsersService } from './users/users.service.js'

/** The services of the account area. */
export interface AccountServices {
  profile: ProfileService
  invoices: InvoicesService
  paymethods: PaymethodsService
  users: UsersService
  tickets: TicketsService
}

/** Builds the account area: profile, invoices, payment methods, users and tickets. */
export function createAccountServices(deps: {
  db: Kysely<DB>
  clock: Clock
  jobs: JobRunner
  config: Config
  payments: PaymentsDriver
  mail: Mailer
  iam: IamService
  log: Logger
}): AccountServices {
  const { db, clock, jobs, config, payments, mail, iam } = deps
  const profile = new ProfileService({ db, clock, mail })
  return {
    profile,
    invoices: new InvoicesService({ db, clock, billing: config.billing, payments, profiles: profile, iam, mail, jobs }),
    paymethods: new PaymethodsService({ db, clock, payments, profiles: profile }),
    users: new UsersService({ db, clock, iam, opts: { newUsersPerHour: 10 } }),
    tickets: new TicketsService({
      db,
      clock,
      mail,
      profiles: profile,
      iam,
      supportAddress: config.mail.supportAddress,
      sanitiser: new SanitisePool(16, deps.log),
    }),
  }
}
