import type { Logger } from 'pino'
import { Type } from 'typebox'
import type { Db } from '../../db/database.js'
import { defineJob, type JobRunner } from '../../jobs/runner.js'
import { checkMessage, MailRejected, type MailDriver, type MailMessage } from '../../drivers/mail/mail.js'

/** The job kind that hands one queued message to the mail driver. */
export const MAIL_JOB = 'mail.send'

/** How the other areas send mail: queued in the transaction of the change the message tells of. */
export type Mailer = Pick<MailService, 'send'>

/** What MailService is built on. */
export interface MailServiceDeps {
  jobs: JobRunner
  driver: MailDriver
  log: Logger
  opts?: { maxAttempts?: number }
}

/**
 * Outgoing mail of the application. `send` checks the message and queues it in the caller's transaction, so the
 * message commits with the change it tells of or not at all; a job hands it to the mail driver, so a slow or
 * failing mail server never holds up a request and failures are retried.
 */
export class MailService {
  private readonly jobs: JobRunner
  private readonly driver: MailDriver
  private readonly log: Logger
  private readonly opts: { maxAttempts?: number }

  constructor(deps: MailServiceDeps) {
    this.jobs = deps.jobs
    this.driver = deps.driver
    this.log = deps.log
    this.opts = deps.opts ?? {}
  }

  /** The job that hands one queued message to the mail driver. */
  readonly sendJob = defineJob({
    name: MAIL_JOB,
    payload: Type.Object({
      to: Type.String(),
      subject: Type.String(),
      text: Type.String(),
      html: Type.Optional(Type.Union([Type.String(), Type.Null()])),
      kind: Type.String(),
      accountId: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
    }),
    handle: async (message) => {
      try {
        return await this.driver.send(message)
      } catch (err) {
        // A message the driver will never accept is dropped, not retried.
        if (err instanceof MailRejected) {
          this.log.warn({ err: err.message }, 'mail rejected by the driver')
          return { rejected: err.message }
        }
        throw err
      }
    },
  })

  /**
   * Queues one message in `trx` (the transaction of the change it tells of; the database itself for a message no
   * change causes); throws MailRejected at once for a message no driver could send.
   */
  async send(trx: Db, message: MailMessage): Promise<{ id: string }> {
    return { id: `job-${await this.queue(trx, message)}` }
  }

  /** Queues one message as `send` does and resolves with the id of its job. */
  async queue(trx: Db, message: MailMessage): Promise<number> {
    checkMessage(message)
    return this.jobs.enqueue(this.sendJob, message, {
      trx,
      accountId: message.accountId ?? null,
      maxAttempts: this.opts.maxAttempts,
    })
  }
}
