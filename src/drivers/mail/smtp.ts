import fs from 'node:fs'
import { createPrivateKey } from 'node:crypto'
import { createTransport, type Transporter } from 'nodemailer'
import type { Clock } from '../../clock.js'
import { iso } from '../../clock.js'
import type { SmtpConfig } from '../../config/mail.js'
import { checkMessage, MailRejected, type MailDriver, type MailMessage } from './mail.js'
import { insertOutboxMessage, type OutboxDb } from './outbox.repository.js'

/** Raised for a message the relay refused for good (a 5xx reply); the message is recorded as failed. */
export class SmtpRefused extends MailRejected {}

// Shorter than nodemailer's defaults (minutes): a send must end well within the job queue's 60 s lease.
const CONNECTION_TIMEOUT_MS = 15_000
const SOCKET_TIMEOUT_MS = 30_000

/** What nodemailer puts on an error of an SMTP exchange. */
interface SmtpError {
  message: string
  code?: string
  responseCode?: number
  response?: string
}

/**
 * The SMTP mail driver: hands every message to a relay (STARTTLS required unless the URL says otherwise),
 * DKIM-signed when configured, and records it in the outbox as `sent` with the relay's reply. A 5xx reply to
 * the sender, the recipient or the message records it as `failed` and throws SmtpRefused (never retried);
 * anything else (4xx, connection refused, timeout, TLS or login trouble) throws a plain Error, so the mail job
 * retries it with backoff. The password and the DKIM key never appear in an error.
 */
export class SmtpMailDriver implements MailDriver {
  private readonly transport: Transporter
  private readonly secrets: string[]

  constructor(
    private readonly db: OutboxDb,
    private readonly clock: Clock,
    private readonly from: string,
    smtp: SmtpConfig,
  ) {
    const dkim = smtp.dkim ? { ...smtp.dkim, privateKey: readDkimKey(smtp.dkim.keyFile) } : null
    this.secrets = [smtp.password, smtp.password && encodeURIComponent(smtp.password)].filter(
      (s): s is string => !!s && s.length >= 3,
    )
    // error-listener: a transport without a pool or OAuth2 emits no 'error'; a failed send rejects sendMail's promise
    this.transport = createTransport({
      host: smtp.host,
      port: smtp.port,
      secure: smtp.security === 'tls',
      requireTLS: smtp.security === 'starttls',
      ignoreTLS: smtp.security === 'none',
      auth: smtp.user ? { user: smtp.user, pass: smtp.password ?? '' } : undefined,
      tls: smtp.caFile ? { ca: readFile('HOSTAPI_SMTP_CA_FILE', smtp.caFile) } : undefined,
      dkim: dkim ? { domainName: dkim.domain, keySelector: dkim.selector, privateKey: dkim.privateKey } : undefined,
      connectionTimeout: CONNECTION_TIMEOUT_MS,
      greetingTimeout: CONNECTION_TIMEOUT_MS,
      socketTimeout: SOCKET_TIMEOUT_MS,
      disableFileAccess: true,
      disableUrlAccess: true,
      logger: false,
    })
  }

  async send(m: MailMessage): Promise<{ id: string }> {
    checkMessage(m)
    let reply: string
    try {
      const info = await this.transport.sendMail({
        from: this.from,
        to: m.to,
        subject: m.subject,
        text: m.text,
        html: m.html ?? undefined,
      })
      reply = String(info.response ?? '')
    } catch (err) {
      const e = err as SmtpError
      if (isPermanent(e)) {
        const reply = this.scrub(e.response || e.message)
        await this.record(m, 'failed', reply)
        throw new SmtpRefused(`The SMTP relay refused the message: ${reply}`)
      }
      const message = e.message || String(err)
      const detail = e.response && !message.includes(e.response) ? `${message} (${e.response})` : message
      throw new Error(`SMTP relay unavailable${e.code ? ` (${e.code})` : ''}: ${this.scrub(detail)}`)
    }
    const id = await this.record(m, 'sent', this.scrub(reply))
    return { id: String(id) }
  }

  private record(m: MailMessage, status: 'sent' | 'failed', detail: string): Promise<number> {
    return insertOutboxMessage(this.db, m, {
      sender: this.from,
      createdAt: iso(this.clock.now()),
      status,
      statusDetail: detail,
    })
  }

  // A server may echo what it was sent (an AUTH line); the password never leaves this driver.
  private scrub(text: string): string {
    let out = text
    for (const s of this.secrets) out = out.split(s).join('***')
    return out.slice(0, 1000)
  }
}

/** A 5xx reply to the envelope or the message: the relay will never take this message. */
function isPermanent(e: SmtpError): boolean {
  const code = e.responseCode ?? 0
  return code >= 500 && code < 600 && (e.code === 'EENVELOPE' || e.code === 'EMESSAGE')
}

/** A file a variable names; a start-up error names the variable and the file. */
function readFile(variable: string, file: string): string {
  try {
    return fs.readFileSync(file, 'utf8')
  } catch (err) {
    throw new Error(`${variable}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`)
  }
}

/** The DKIM private key as PEM; a start-up error names the file, never its content. */
function readDkimKey(file: string): string {
  const pem = readFile('HOSTAPI_DKIM_KEY_FILE', file)
  try {
    createPrivateKey(pem)
  } catch {
    throw new Error(`HOSTAPI_DKIM_KEY_FILE: ${file} is not a PEM private key`)
  }
  return pem
}
