import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { createServer } from 'node:net'
import { ManualClock, systemClock } from '../src/clock.js'
import { ConfigError, loadConfig } from '../src/config/config.js'
import { forEachDialect, startTestApp, tempDir, type TestApp } from './helpers/app.js'
import {
  dkimKeyPair,
  itWithDkimVerifier,
  selfSignedCert,
  startSmtpServer,
  verifyDkim,
  type TestSmtpServer,
} from './helpers/smtp.js'

const PASSWORD = 'p@ss:w0rd/relay'
const DKIM = { domain: 'hosting.example', selector: 'hostapi2026' }

/** The environment of an app that sends through `server` with STARTTLS, logging in, DKIM-signing. */
function smtpEnv(server: { port: number; caFile: string }, dir: string, dkimKey: string): Record<string, string> {
  const keyFile = path.join(dir, 'dkim.pem')
  fs.writeFileSync(keyFile, dkimKey, { mode: 0o600 })
  return {
    HOSTAPI_MAIL_DRIVER: 'smtp',
    HOSTAPI_SMTP_URL: `smtp://hostapi:${encodeURIComponent(PASSWORD)}@127.0.0.1:${server.port}`,
    HOSTAPI_SMTP_CA_FILE: server.caFile,
    HOSTAPI_MAIL_FROM: 'noreply@hosting.example',
    HOSTAPI_DKIM_DOMAIN: DKIM.domain,
    HOSTAPI_DKIM_SELECTOR: DKIM.selector,
    HOSTAPI_DKIM_KEY_FILE: keyFile,
    HOSTAPI_AUTH_FAIL_LIMIT: '0',
  }
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer()
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))
  const { port } = s.address() as { port: number }
  await new Promise<void>((resolve) => s.close(() => resolve()))
  return port
}

forEachDialect((dialect) => {
  describe(`mail through an SMTP relay (${dialect})`, () => {
    let t: TestApp
    let server: TestSmtpServer
    let token: string
    let dir: string
    const clock = new ManualClock(systemClock)
    const dkim = dkimKeyPair()
    const adm = (p: string) => t.request('GET', `/admin/v1${p}`, { headers: { authorization: `Bearer ${token}` } })
    const jobOf = async (id: string) => (await t.ctx.jobs.get(Number(id.replace('job-', ''))))!

    before(async () => {
      dir = tempDir()
      server = await startSmtpServer({ login: { user: 'hostapi', password: PASSWORD } })
      t = await startTestApp(dialect, { clock, env: smtpEnv(server, dir, dkim.privateKey) })
      token = (await t.ctx.services.admin.createToken('test')).token
    })
    after(async () => {
      await t.close()
      await server.close()
      fs.rmSync(dir, { recursive: true, force: true })
    })

    it('delivers a queued message over STARTTLS with its login: headers, text and HTML parts', async () => {
      const { id } = await t.ctx.services.mail.send(t.ctx.db, {
        to: 'ann@customer.example',
        subject: 'Factuur € 12,10',
        text: 'Hallo Ann,\n\nUw factuur staat klaar.',
        html: '<p>Hallo Ann,</p><p>Uw factuur staat klaar.</p>',
        kind: 'invoice.created',
      })
      assert.equal(server.received.length, 0, 'nothing leaves before the job runs')
      await t.ctx.jobs.drain()
      assert.equal((await jobOf(id)).status, 'done')
      const [r] = server.received
      assert.ok(r, 'the server received the message')
      assert.equal(r.secure, true, 'STARTTLS was used')
      assert.equal(r.user, 'hostapi')
      assert.equal(r.mailFrom, 'noreply@hosting.example')
      assert.deepEqual(r.rcptTo, ['ann@customer.example'])
      const m = r.parsed
      assert.equal(m.subject, 'Factuur € 12,10')
      assert.equal(m.from?.text, 'noreply@hosting.example')
      assert.deepEqual(
        (Array.isArray(m.to) ? m.to : [m.to]).map((a) => a?.text),
        ['ann@customer.example'],
      )
      assert.ok(m.messageId && m.date, 'Message-ID and Date are set')
      assert.match(r.raw.toString(), /^Content-Type: multipart\/alternative/im)
      assert.equal(m.text?.trim(), 'Hallo Ann,\n\nUw factuur staat klaar.')
      assert.equal(m.html, '<p>Hallo Ann,</p><p>Uw factuur staat klaar.</p>')
      const signature = /^DKIM-Signature:.*(?:\r\n[ \t].*)*/m.exec(r.raw.toString())?.[0] ?? ''
      assert.match(signature, new RegExp(`d=${DKIM.domain};`))
      assert.match(signature, new RegExp(`s=${DKIM.selector};`))

      const list = await adm('/outbox?recipient=ann@customer.example')
      assert.equal(list.status, 200, list.text)
      const [row] = list.body.data.messages
      assert.equal(row.status, 'sent')
      assert.match(row.status_detail, /^250 .*Ok: queued/)
      assert.equal(row.html_body, '<p>Hallo Ann,</p><p>Uw factuur staat klaar.</p>')
    })

    itWithDkimVerifier(
      'signs with DKIM: the signature verifies with dkimpy, and fails once the body changes',
      async (tc) => {
        const r = server.received.find((x) => x.rcptTo.includes('ann@customer.example'))!
        const verdict = verifyDkim(r.raw, DKIM.domain, DKIM.selector, dkim.txt)
        assert.equal(verdict, `pass ${DKIM.domain} ${DKIM.selector}`)
        tc.diagnostic(`dkimpy: ${verdict}`)
        const tampered = Buffer.from(r.raw.toString().replace('Uw factuur staat klaar.', 'Uw factuur is betaald.'))
        assert.match(verifyDkim(tampered, DKIM.domain, DKIM.selector, dkim.txt), /^fail \(body hash mismatch/)
      },
    )

    it('retries a temporary refusal (451) with backoff and delivers on the next attempt', async () => {
      server.refuseNext({ code: 451, text: '4.7.1 Greylisted, try again later' })
      const before = server.received.length
      const { id } = await t.ctx.services.mail.send(t.ctx.db, {
        to: 'bob@customer.example',
        subject: 'Hi',
        text: 'x',
        kind: 't',
      })
      await t.ctx.jobs.drain()
      let job = await jobOf(id)
      assert.equal(job.status, 'queued')
      assert.equal(job.attempts, 1)
      assert.match(job.last_error ?? '', /451 4\.7\.1 Greylisted/)
      assert.equal(server.received.length, before)
      assert.equal((await adm('/outbox?recipient=bob@customer.example')).body.data.messages.length, 0)
      assert.equal(await t.ctx.jobs.drain(), 0, 'not before the backoff has passed')
      clock.advance(2_000)
      await t.ctx.jobs.drain()
      job = await jobOf(id)
      assert.equal(job.status, 'done')
      assert.equal(job.attempts, 2)
      assert.equal(server.received.length, before + 1)
      const [row] = (await adm('/outbox?recipient=bob@customer.example')).body.data.messages
      assert.equal(row.status, 'sent')
    })

    it('records a permanent refusal (550) as failed with the reply, without retrying', async () => {
      server.refuseNext({ code: 550, text: '5.1.1 <gone@customer.example>: Recipient address rejected' })
      const { id } = await t.ctx.services.mail.send(t.ctx.db, {
        to: 'gone@customer.example',
        subject: 'Hi',
        text: 'x',
        kind: 't',
      })
      await t.ctx.jobs.drain()
      const job = await jobOf(id)
      assert.equal(job.status, 'done')
      assert.equal(job.attempts, 1)
      assert.match(JSON.stringify(job.result), /refused the message: 550 5\.1\.1/)
      const list = await adm('/outbox?status=failed')
      assert.equal(list.status, 200, list.text)
      const [row] = list.body.data.messages
      assert.equal(row.to, 'gone@customer.example')
      assert.equal(row.status, 'failed')
      assert.equal(row.status_detail, '550 5.1.1 <gone@customer.example>: Recipient address rejected')
      assert.equal((await adm(`/outbox/${row.id}`)).body.data.status, 'failed')
    })

    it('resends a refused message from the admin API: a new attempt the relay accepts, recorded as sent', async () => {
      const post = (p: string) => t.request('POST', `/admin/v1${p}`, { headers: { authorization: `Bearer ${token}` } })
      server.refuseNext({ code: 550, text: '5.7.1 <later@customer.example>: Relay access denied' })
      await t.ctx.services.mail.send(t.ctx.db, { to: 'later@customer.example', subject: 'Hi', text: 'x', kind: 't' })
      await t.ctx.jobs.drain()
      const [refused] = (await adm('/outbox?recipient=later@customer.example')).body.data.messages
      assert.equal(refused.status, 'failed')
      const before = server.received.length

      const resent = await post(`/outbox/${refused.id}/resend`)
      assert.equal(resent.status, 200, resent.text)
      assert.equal(resent.body.status_description, 'Message queued')
      assert.equal(resent.body.data.kind, 'mail.send')
      assert.equal(resent.body.data.status, 'queued')
      await t.ctx.jobs.drain()
      assert.equal((await t.ctx.jobs.get(resent.body.data.id))?.status, 'done')
      assert.equal(server.received.length, before + 1, 'the relay received it this time')
      const r = server.received[server.received.length - 1]
      assert.deepEqual(r.rcptTo, ['later@customer.example'])
      assert.equal(r.parsed.subject, 'Hi')

      const rows = (await adm('/outbox?recipient=later@customer.example')).body.data.messages
      assert.deepEqual(
        rows.map((m: { status: string }) => m.status),
        ['sent', 'failed'],
        'the new attempt is a new message; the refusal stays on record',
      )
      // Only a refused message can be resent; an unknown one is not found.
      assert.deepEqual((await post(`/outbox/${rows[0].id}/resend`)).body, {
        status: 400,
        status_description: 'Only a message the relay refused can be resent (this one is sent)',
      })
      assert.deepEqual((await post('/outbox/999999/resend')).body, {
        status: 404,
        status_description: 'Message not found',
      })
    })
  })
})

describe('SMTP relay connections: TLS from the start, and failures that are retried', () => {
  let dir: string
  const dkim = dkimKeyPair()
  before(() => {
    dir = tempDir()
  })
  after(() => fs.rmSync(dir, { recursive: true, force: true }))

  /** Sends one message through an app pointed at `server` and returns the job after its first attempt. */
  async function firstAttempt(server: { port: number; caFile: string }, env: Record<string, string> = {}) {
    const t = await startTestApp('sqlite', { env: { ...smtpEnv(server, dir, dkim.privateKey), ...env } })
    try {
      const { id } = await t.ctx.services.mail.send(t.ctx.db, {
        to: 'x@customer.example',
        subject: 'Hi',
        text: 'x',
        kind: 't',
      })
      await t.ctx.jobs.drain()
      const job = (await t.ctx.jobs.get(Number(id.replace('job-', ''))))!
      const outbox = await t.ctx.db.selectFrom('outbox').selectAll().execute()
      return { job, outbox }
    } finally {
      await t.close()
    }
  }

  it('smtps:// speaks TLS from the first byte', async () => {
    const server = await startSmtpServer({ implicitTls: true, login: { user: 'hostapi', password: PASSWORD } })
    try {
      const url = `smtps://hostapi:${encodeURIComponent(PASSWORD)}@127.0.0.1:${server.port}`
      const { job, outbox } = await firstAttempt(server, { HOSTAPI_SMTP_URL: url })
      assert.equal(job.status, 'done', job.last_error ?? '')
      assert.equal(server.received.length, 1)
      assert.equal(server.received[0].secure, true)
      assert.equal(server.received[0].user, 'hostapi')
      assert.deepEqual(
        outbox.map((m) => m.status),
        ['sent'],
      )
    } finally {
      await server.close()
    }
  })

  it('a wrong password: retried (the relay may be fixed), and the password is in no error', async () => {
    const server = await startSmtpServer({ login: { user: 'hostapi', password: PASSWORD } })
    try {
      const url = `smtp://hostapi:not-the-secret-42@127.0.0.1:${server.port}`
      const { job, outbox } = await firstAttempt(server, { HOSTAPI_SMTP_URL: url })
      assert.equal(job.status, 'queued')
      assert.match(job.last_error ?? '', /SMTP relay unavailable \(EAUTH\).*535/)
      assert.doesNotMatch(job.last_error ?? '', /not-the-secret-42/)
      assert.equal(server.badLogins, 1)
      assert.deepEqual(server.received, [])
      assert.deepEqual(outbox, [])
    } finally {
      await server.close()
    }
  })

  it('a relay that is down (connection refused): the job waits for a retry, nothing recorded as failed', async () => {
    const { job, outbox } = await firstAttempt({ port: await closedPort(), caFile: selfSignedCert(dir).cert })
    assert.equal(job.status, 'queued')
    assert.equal(job.max_attempts, 16)
    assert.match(job.last_error ?? '', /SMTP relay unavailable \(ESOCKET\).*ECONNREFUSED/)
    assert.doesNotMatch(job.last_error ?? '', /w0rd/)
    assert.deepEqual(outbox, [])
  })

  it('a relay without STARTTLS: nothing is sent in clear, the job waits for a retry', async () => {
    const server = await startSmtpServer({ noStartTls: true })
    try {
      const { job, outbox } = await firstAttempt(server)
      assert.equal(job.status, 'queued')
      assert.match(job.last_error ?? '', /STARTTLS/i)
      assert.deepEqual(server.received, [])
      assert.deepEqual(outbox, [])
    } finally {
      await server.close()
    }
  })

  it('a relay whose certificate is not trusted (no HOSTAPI_SMTP_CA_FILE): nothing is sent, retried', async () => {
    const server = await startSmtpServer({ login: { user: 'hostapi', password: PASSWORD } })
    try {
      // Another self-signed certificate as the CA: the server's own is not trusted.
      const caFile = selfSignedCert(fs.mkdtempSync(path.join(dir, 'ca-'))).cert
      const { job, outbox } = await firstAttempt({ port: server.port, caFile })
      assert.equal(job.status, 'queued')
      assert.match(job.last_error ?? '', /certificate/i)
      assert.deepEqual(server.received, [])
      assert.equal(server.badLogins, 0, 'the password is never sent over an untrusted connection')
      assert.deepEqual(outbox, [])
    } finally {
      await server.close()
    }
  })
})

describe('SMTP relay configuration', () => {
  const base = { HOSTAPI_DATA_DIR: '/tmp/hostapi-x', HOSTAPI_MAIL_DRIVER: 'smtp' }
  const problems = (env: Record<string, string>): string[] => {
    try {
      loadConfig({ ...base, ...env })
    } catch (err) {
      if (err instanceof ConfigError) return err.problems
      throw err
    }
    return []
  }

  it('reads smtp:// (STARTTLS required, port 587), smtps:// (TLS, port 465) and ?starttls=false (plain)', () => {
    const smtp = (url: string) => {
      const c = loadConfig({ ...base, HOSTAPI_SMTP_URL: url }).mailDriver
      assert.equal(c.driver, 'smtp')
      return c.driver === 'smtp' ? c.smtp : null
    }
    assert.deepEqual(smtp('smtp://user%40x:p%40ss@relay.example'), {
      host: 'relay.example',
      port: 587,
      security: 'starttls',
      user: 'user@x',
      password: 'p@ss',
      caFile: null,
      dkim: null,
    })
    assert.equal(smtp('smtps://relay.example')?.port, 465)
    assert.equal(smtp('smtps://relay.example')?.security, 'tls')
    assert.equal(smtp('smtp://127.0.0.1:25?starttls=false')?.security, 'none')
    assert.equal(smtp('smtp://[::1]:2525')?.host, '::1')
    assert.equal(loadConfig({ HOSTAPI_DATA_DIR: '/tmp/hostapi-x' }).mailDriver.driver, 'builtin')
  })

  it('lists every problem, with the password masked', () => {
    const p = problems({
      HOSTAPI_SMTP_URL: 'http://user:hunter22@relay.example',
      HOSTAPI_DKIM_DOMAIN: 'hosting.example',
    })
    assert.deepEqual(p, [
      'HOSTAPI_SMTP_URL must start with smtp:// or smtps:// (got "http://user:***@relay.example")',
      'HOSTAPI_DKIM_DOMAIN, HOSTAPI_DKIM_SELECTOR, HOSTAPI_DKIM_KEY_FILE must be set together (DKIM signing) ' +
        'or not at all',
    ])
    assert.deepEqual(problems({ HOSTAPI_SMTP_URL: 'smtps://u:hunter22@relay.example?starttls=false' }), [
      'HOSTAPI_SMTP_URL takes no query but ?starttls=false (or true) on smtp:// ' +
        '(got "smtps://u:***@relay.example?starttls=false")',
    ])
    assert.deepEqual(problems({}), ['HOSTAPI_SMTP_URL must be set when HOSTAPI_MAIL_DRIVER is smtp'])
    assert.deepEqual(problems({ HOSTAPI_MAIL_DRIVER: 'sendmail' }), [
      'HOSTAPI_MAIL_DRIVER must be builtin or smtp (got "sendmail")',
    ])
    assert.deepEqual(problems({ HOSTAPI_MAIL_DRIVER: '', HOSTAPI_SMTP_URL: 'smtp://relay.example' }), [
      'HOSTAPI_SMTP_URL apply to HOSTAPI_MAIL_DRIVER=smtp only',
    ])
    assert.deepEqual(
      problems({
        HOSTAPI_SMTP_URL: 'smtp://relay.example',
        HOSTAPI_DKIM_DOMAIN: 'not a domain',
        HOSTAPI_DKIM_SELECTOR: 'a b',
        HOSTAPI_DKIM_KEY_FILE: '/nonexistent/key.pem',
      }),
      [
        'HOSTAPI_DKIM_DOMAIN must be a domain name (got "not a domain")',
        'HOSTAPI_DKIM_SELECTOR must be one or more DNS labels (got "a b")',
      ],
    )
  })

  it('refuses to start with a DKIM key file that is not a private key, naming the file only', async () => {
    const dir = tempDir()
    try {
      const keyFile = path.join(dir, 'dkim.pem')
      fs.writeFileSync(keyFile, 'SECRET-MATERIAL')
      await assert.rejects(
        startTestApp('sqlite', {
          env: {
            HOSTAPI_MAIL_DRIVER: 'smtp',
            HOSTAPI_SMTP_URL: 'smtp://relay.example',
            HOSTAPI_DKIM_DOMAIN: 'hosting.example',
            HOSTAPI_DKIM_SELECTOR: 's1',
            HOSTAPI_DKIM_KEY_FILE: keyFile,
          },
        }),
        (err: Error) => {
          assert.equal(err.message, `HOSTAPI_DKIM_KEY_FILE: ${keyFile} is not a PEM private key`)
          return true
        },
      )
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
