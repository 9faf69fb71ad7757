import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { AddressInfo } from 'node:net'
import { execFileSync, spawnSync } from 'node:child_process'
import { generateKeyPairSync } from 'node:crypto'
import { it, type TestContext } from 'node:test'
import { SMTPServer, type SMTPServerOptions } from 'smtp-server'
import { simpleParser, type ParsedMail } from 'mailparser'

/** One message a test SMTP server received, with how it came in. */
export interface Received {
  raw: Buffer
  parsed: ParsedMail
  mailFrom: string
  rcptTo: string[]
  /** True when the session ran over TLS (STARTTLS or implicit). */
  secure: boolean
  /** The user the client logged in as; null without AUTH. */
  user: string | null
}

/** A receiving SMTP server of a test on loopback (smtp-server), with a self-signed certificate for STARTTLS. */
export interface TestSmtpServer {
  port: number
  /** The server's self-signed certificate (PEM), to be trusted as the CA (HOSTAPI_SMTP_CA_FILE). */
  caFile: string
  received: Received[]
  /** Answers the next RCPT TO commands with these replies, one each, before accepting again. */
  refuseNext(...replies: { code: number; text: string }[]): void
  /** Sessions that asked for AUTH with a wrong password. */
  badLogins: number
  close(): Promise<void>
}

/** A fresh self-signed certificate for localhost and 127.0.0.1 in `dir`: `{ key, cert }` file paths. */
export function selfSignedCert(dir: string): { key: string; cert: string } {
  const key = path.join(dir, 'smtp-key.pem')
  const cert = path.join(dir, 'smtp-cert.pem')
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  )
  return { key, cert }
}

/**
 * Starts an SMTP server on 127.0.0.1 that offers STARTTLS (unless `noStartTls`) and, with `login`, requires
 * AUTH with that user and password; every message it accepts is parsed into `received`.
 */
export async function startSmtpServer(
  opts: {
    login?: { user: string; password: string }
    noStartTls?: boolean
    implicitTls?: boolean
    /** Listen on this port (a server started again where an earlier one was); a free one when omitted. */
    port?: number
    /** Its certificate and key (PEM files, kept by the caller) instead of a fresh self-signed pair. */
    cert?: { key: string; cert: string }
  } = {},
): Promise<TestSmtpServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostapi-smtp-'))
  const { key, cert } = opts.cert ?? selfSignedCert(dir)
  const refusals: { code: number; text: string }[] = []
  const received: Received[] = []
  const state = { badLogins: 0 }
  const options: SMTPServerOptions = {
    secure: opts.implicitTls ?? false,
    key: fs.readFileSync(key),
    cert: fs.readFileSync(cert),
    // Hidden alone, STARTTLS would still be accepted; disabled, the command is refused.
    hideSTARTTLS: opts.noStartTls ?? false,
    authOptional: !opts.login,
    disabledCommands: [...(opts.login ? [] : ['AUTH']), ...(opts.noStartTls ? ['STARTTLS'] : [])],
    logger: false,
    onAuth(auth, _session, cb) {
      if (opts.login && auth.username === opts.login.user && auth.password === opts.login.password) {
        cb(null, { user: auth.username })
        return
      }
      state.badLogins++
      cb(Object.assign(new Error('Authentication failed'), { responseCode: 535 }))
    },
    onRcptTo(_address, _session, cb) {
      const refusal = refusals.shift()
      if (refusal) cb(Object.assign(new Error(refusal.text), { responseCode: refusal.code }))
      else cb()
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = []
      stream.on('data', (c: Buffer) => chunks.push(c))
      stream.on('end', () => {
        const raw = Buffer.concat(chunks)
        simpleParser(raw).then(
          (parsed) => {
            received.push({
              raw,
              parsed,
              mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              rcptTo: session.envelope.rcptTo.map((a) => a.address),
              secure: session.secure,
              user: typeof session.user === 'string' ? session.user : null,
            })
            cb(null, 'Ok: queued')
          },
          (err: Error) => cb(err),
        )
      })
    },
  }
  const server = new SMTPServer(options)
  server.on('error', () => undefined)
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve))
  const port = (server.server.address() as AddressInfo).port
  return {
    port,
    caFile: cert,
    received,
    refuseNext: (...replies) => refusals.push(...replies),
    get badLogins() {
      return state.badLogins
    },
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()))
      fs.rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** A DKIM key pair: the private key (PEM) and the TXT record to publish at `<selector>._domainkey.<domain>`. */
export function dkimKeyPair(): { privateKey: string; txt: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const p = publicKey.export({ type: 'spki', format: 'der' }).toString('base64')
  return { privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), txt: `v=DKIM1; k=rsa; p=${p}` }
}

const PYTHON = '/usr/bin/python3'

/** Why a message's DKIM signature cannot be verified here (Debian's python3-dkim), or false when it can. */
export function dkimVerifierMissing(): string | false {
  const r = spawnSync(PYTHON, ['-c', 'import dkim'], { stdio: 'ignore' })
  return r.status === 0 ? false : 'python3-dkim (dkimpy) not installed'
}

/** it(name, fn) when the DKIM verifier can run; otherwise a skipped test of that name giving the reason. */
export function itWithDkimVerifier(name: string, fn: (t: TestContext) => Promise<void>): void {
  const reason = dkimVerifierMissing()
  if (reason) it(name, { skip: reason }, () => undefined)
  else it(name, fn)
}

// dkimpy's own verifier, with the selector's TXT record answered from here instead of from DNS.
const VERIFY = `
import sys, dkim
name, txt = sys.argv[1].encode(), sys.argv[2].encode()
def dns(qname, timeout=5):
    return txt if qname.rstrip(b'.') == name else None
message = sys.stdin.buffer.read()
d = dkim.DKIM(message)
try:
    verdict = 'pass' if d.verify(dnsfunc=dns) else 'fail'
except dkim.ValidationError as e:
    verdict = 'fail (%s)' % e
print(verdict, d.domain.decode() if d.domain else '-', d.selector.decode() if d.selector else '-')
`

/**
 * Verifies the DKIM signature of a raw message with dkimpy (Debian python3-dkim), the key record answered as
 * `txt` for `<selector>._domainkey.<domain>`; returns its verdict line: `pass <domain> <selector>` when it verifies,
 * `fail (<reason>) …` when not.
 */
export function verifyDkim(raw: Buffer, domain: string, selector: string, txt: string): string {
  const r = spawnSync(PYTHON, ['-c', VERIFY, `${selector}._domainkey.${domain}`, txt], { input: raw, encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`dkimpy failed: ${r.stderr}`)
  return r.stdout.trim()
}
