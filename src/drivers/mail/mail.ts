/** One e-mail message as the application hands it to a mail driver. */
export interface MailMessage {
  /** One recipient address. */
  to: string
  /** A single line; drivers refuse line breaks (header injection). */
  subject: string
  /** The plain-text body; always present. */
  text: string
  /** An optional HTML alternative, already sanitised by the caller. */
  html?: string | null
  /** What the message is about, for the operator (`ticket.created`, `profile.verify_email`, …). */
  kind: string
  /** The account the message concerns, when there is one. */
  accountId?: number | null
}

/** Raised by a driver for a message it will never be able to send (bad address, header injection). */
export class MailRejected extends Error {}

/**
 * Sends e-mail for the application. Every implementation passes `contract.test.ts`.
 */
export interface MailDriver {
  /** Sends one message, or hands it to something that will; resolves with the driver's id for it. Throws MailRejected for an unsendable message. */
  send(message: MailMessage): Promise<{ id: string }>
}

const ADDRESS =
  /^[^\s@<>()",;:\\]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/

/** True for a plain `local@domain.tld` address, the only form the API accepts. */
export const isEmailAddress = (s: string): boolean => s.length <= 254 && ADDRESS.test(s)

/** Throws MailRejected when a message cannot be sent as it is; shared by every driver. */
export function checkMessage(m: MailMessage): void {
  if (!isEmailAddress(m.to)) throw new MailRejected(`Invalid recipient address: ${m.to}`)
  if (/[\r\n]/.test(m.subject)) throw new MailRejected('The subject must be one line')
  if (!m.subject.trim()) throw new MailRejected('The subject is empty')
  if (!m.kind) throw new MailRejected('The message has no kind')
}
