import type { Logger } from 'pino'
import type { JobRunner } from '../../jobs/runner.js'
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
    driver: MailDriver,
    log: Logger,
  ) {
    jobs.register(MAIL_JOB, async ({ payload }) => {
      try {
        return await driver.send(payload as MailMessage)
      } catch (err) {
        // A message the driver will never accept is dropped, not retried.
        if (err instanceof MailRejected) {
          log.warn({ err: err.message }, 'mail rejected by the driver')
          return { rejected: err.message }
        }
        throw err
      }
    })
  }

  /** Queues one message; throws MailRejected at once for a message no driver could send. */
  async send(message: MailMessage): Promise<{ id: string }> {
    checkMessage(message)
    const id = await this.jobs.enqueue(MAIL_JOB, message, { accountId: message.accountId ?? null })
    return { id: `job-${id}` }
  }
}
