import type { Logger } from 'pino'
import { Type } from 'typebox'
import { defineJob, type JobRunner } from '../../jobs/runner.js'
import { checkMessage, MailRejected, type MailDriver, type MailMessage } from '../../drivers/mail/mail.js'

/** The job kind that hands one queued message to the mail driver. */
export const MAIL_JOB = 'mail.send'

/**
 * Outgoing mail of the application. `send` checks the message and queues it; a job hands it to the
 * mail driver, so a slow or failing mail server never holds up a request and failures are retried.
 */
export class MailService implements MailDriver {
  constructor(
    private readonly jobs: JobRunner,
    private readonly driver: MailDriver,
    private readonly log: Logger,
    private readonly opts: { maxAttempts?: number } = {},
  ) {}

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

  /** Queues one message; throws MailRejected at once for a message no driver could send. */
  async send(message: MailMessage): Promise<{ id: string }> {
    return { id: `job-${await this.queue(message)}` }
  }

  /** Queues one message and resolves with the id of its job; throws MailRejected as `send` does. */
  async queue(message: MailMessage): Promise<number> {
    checkMessage(message)
    return this.jobs.enqueue(this.sendJob, message, {
      accountId: message.accountId ?? null,
      maxAttempts: this.opts.maxAttempts,
    })
  }
}
