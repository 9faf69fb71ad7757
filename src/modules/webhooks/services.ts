import fs from 'node:fs'
import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import type { Clock } from '../../clock.js'
import type { Config } from '../../config/config.js'
import type { DB } from '../../db/tables.js'
import type { Mailer } from '../mail/mail.service.js'
import type { SecretBox } from '../../lib/secret-box.js'
import type { JobRunner } from '../../jobs/runner.js'
import { WebhooksService } from './webhooks.service.js'
import type { WorkFaults } from '../../ops/faults.js'

/** Builds the webhooks area's service from the configuration. */
export function createWebhooksService(deps: {
  db: Kysely<DB>
  clock: Clock
  jobs: JobRunner
  config: Config
  box: SecretBox
  mail: Mailer
  log: Logger
  /** Sandbox fault injection into asynchronous work; null in production. */
  faults?: WorkFaults | null
}): WebhooksService {
  const { db, clock, jobs, config, box, mail, log } = deps
  const w = config.webhooks
  return new WebhooksService({
    db,
    clock,
    jobs,
    box,
    mail,
    log,
    opts: {
      maxEndpoints: w.maxEndpoints,
      endpointConcurrency: w.endpointConcurrency,
      accountConcurrency: w.accountConcurrency,
      sender: {
        allowHttp: w.allowHttp,
        allowPrivate: w.allowPrivate,
        timeoutMs: w.timeoutMs,
        ca: w.caFile ? fs.readFileSync(w.caFile, 'utf8') : null,
      },
      faults: deps.faults,
    },
  })
}
