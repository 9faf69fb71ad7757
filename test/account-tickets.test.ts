import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../src/clock.js'
import { sanitiseMessage, htmlToText } from '../src/modules/account/tickets/sanitise.js'
import type { OutboxMailDriver } from '../src/drivers/mail/builtin.js'
import { forEachDialect, startTestApp, type TestAccount, type TestApp } from './helpers/app.js'

const HOSTILE: [string, string][] = [
  ['script tag', '<p>Hi</p><script>alert("xss")</script>'],
  ['img onerror', '<img src=x onerror="alert(1)">Look'],
  ['event handler and style', '<p onclick="steal()" style="background:url(javascript:alert(1))" class="x">Text</p>'],
  ['javascript: link', '<a href="javascript:alert(1)">click</a>'],
  ['mixed-case javascript: link', '<a href="JaVaScRiPt:alert(1)">click</a>'],
  ['entity-encoded javascript: link', '<a href="jav&#x09;ascript:alert(1)">click</a>'],
  [
    'data-URI image',
    '<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==">Pic',
  ],
  ['data-URI link', '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">open</a>'],
  ['svg onload', '<svg onload="alert(1)"><circle r="1"/></svg>Shape'],
  ['iframe', '<iframe src="https://evil.example/"></iframe>Frame'],
  ['style tag', '<style>body{display:none}</style>Styled'],
  ['unclosed attribute trick', '<a href="https://ok.example/" onmouseover="alert(1)">ok</a>'],
]

const assertSafe = (html: string, label: string) => {
  assert.doesNotMatch(html, /<script|<img|<svg|<iframe|<style/i, label)
  assert.doesNotMatch(html, /\son[a-z]+\s*=/i, label)
  assert.doesNotMatch(html, /javascript:|data:/i, label)
  assert.doesNotMatch(html, /alert\(|steal\(|display:none/, label)
}

describe('ticket message sanitiser', () => {
  for (const [label, input] of HOSTILE) {
    it(`removes ${label}`, () => assertSafe(sanitiseMessage(input), label))
  }
  it('keeps harmless formatting and safe links, marked nofollow', () => {
    const out = sanitiseMessage(
      '<p>Hello <strong>there</strong></p><ul><li>one</li></ul><a href="https://docs.example.com/x?a=1&b=2">docs</a>',
    )
    assert.equal(
      out,
      '<p>Hello <strong>there</strong></p><ul><li>one</li></ul><a href="https://docs.example.com/x?a=1&amp;b=2" rel="noopener noreferrer nofollow">docs</a>',
    )
  })
  it('escapes plain text and keeps its line breaks', () => {
    assert.equal(
      sanitiseMessage('if a < b && c > d\nthen "x"'),
      'if a &lt; b &amp;&amp; c &gt; d<br />then &quot;x&quot;',
    )
    assert.equal(htmlToText(sanitiseMessage('line 1\nline <2>')), 'line 1\nline <2>')
  })
})

forEachDialect((dialect) => {
  describe(`support tickets (${dialect})`, () => {
    let t: TestApp
    let a: TestAccount
    let clock: ManualClock
    let outbox: OutboxMailDriver
    const open = (key: string, subject: string, message = 'Please help', department = 'support') =>
      t.request('POST', '/account/tickets/', { key, body: { subject, message, department } })

    before(async () => {
      clock = new ManualClock()
      t = await startTestApp(dialect, { clock, env: { HOSTAPI_SUPPORT_EMAIL: 'desk@hosting.example' } })
      a = await t.account()
      outbox = t.ctx.drivers.mail as OutboxMailDriver
    })
    after(() => t.close())

    it('opens a ticket with its first message and mails the desk and the customer', async () => {
      const r = await open(a.key, 'DNS not resolving', 'example.nl does not resolve.\nSince 9:00.', 'public_cloud')
      assert.equal(r.status, 200)
      assert.equal(r.body.status_description, 'Ticket created')
      const d = r.body.data
      assert.ok(Number.isInteger(d.ticket_number) && d.ticket_number > 100000)
      assert.equal(d.subject, 'DNS not resolving')
      assert.equal(d.status, 'open')
      assert.equal(d.department, 'public_cloud')
      assert.match(d.created, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
      assert.equal(d.thread.length, 1)
      assert.deepEqual(d.thread[0], {
        created: d.created,
        from: 'user',
        author: `Owner ${d.creator.split(' ')[1]}`,
        body: 'example.nl does not resolve.<br />Since 9:00.',
      })

      await t.ctx.jobs.drain()
      const desk = (await outbox.list({ to: 'desk@hosting.example' })).find((m) =>
        m.subject.includes(`#${d.ticket_number}`),
      )!
      assert.equal(desk.kind, 'ticket.created')
      assert.match(desk.text_body, /example\.nl does not resolve\.\nSince 9:00\./)
      assert.match(desk.text_body, new RegExp(String(a.customerNumber)))
      const customerMail = (await outbox.list()).find(
        (m) =>
          m.kind === 'ticket.created' &&
          m.recipient !== 'desk@hosting.example' &&
          m.subject.includes(`#${d.ticket_number}`),
      )
      assert.ok(customerMail, 'the customer gets a confirmation')

      const got = await t.request('GET', `/account/tickets/${d.ticket_number}`, { key: a.key })
      assert.deepEqual(got.body.data, d)
    })

    it('stores and serves only sanitised HTML for hostile messages', async () => {
      for (const [label, input] of HOSTILE) {
        const r = await open(a.key, `Hostile: ${label}`, input)
        assert.equal(r.status, 200, label)
        assertSafe(r.body.data.thread[0].body, label)
        const row = await t.ctx.db
          .selectFrom('ticket_messages as m')
          .innerJoin('tickets as t', 't.id', 'm.ticket_id')
          .select('m.body')
          .where('t.ticket_number', '=', r.body.data.ticket_number)
          .executeTakeFirstOrThrow()
        assertSafe(row.body, `${label} (stored)`)
      }
      const only = await open(a.key, 'Only an image', '<img src="data:image/png;base64,AAAA"><script>x()</script>')
      assert.deepEqual(only.body, {
        status: 400,
        status_description: 'The message is empty once unsafe HTML is removed',
      })
    })

    it('sanitises on the way out too (rows stored by older versions)', async () => {
      const r = await open(a.key, 'Legacy')
      const ticket = await t.ctx.db
        .selectFrom('tickets')
        .select('id')
        .where('ticket_number', '=', r.body.data.ticket_number)
        .executeTakeFirstOrThrow()
      await t.ctx.db
        .insertInto('ticket_messages')
        .values({
          ticket_id: ticket.id,
          sender: 'support',
          author: 'Old',
          body: '<p>Hi<img src=x onerror=alert(1)></p>',
          created_at: clock.now().toISOString(),
        })
        .execute()
      const got = await t.request('GET', `/account/tickets/${r.body.data.ticket_number}`, { key: a.key })
      assert.equal(got.body.data.thread[1].body, '<p>Hi</p>')
    })

    it('lists newest activity first, pages, searches subject and number, and refuses a page past the end', async () => {
      const c = await t.account()
      const numbers: number[] = []
      for (const s of ['Invoice question', 'VPS down', 'Transfer domain']) {
        clock.advance(60_000)
        numbers.push((await open(c.key, s)).body.data.ticket_number)
      }
      clock.advance(60_000)
      await t.request('POST', `/account/tickets/${numbers[0]}/reply`, { key: c.key, body: { message: 'Any news?' } })
      const list = await t.request('GET', '/account/tickets', { key: c.key })
      assert.deepEqual(
        list.body.data.tickets.map((x: { ticket_number: number }) => x.ticket_number),
        [numbers[0], numbers[2], numbers[1]],
      )
      const row = list.body.data.tickets[0]
      assert.deepEqual(Object.keys(row).sort(), [
        'creator',
        'department',
        'last_updated',
        'status',
        'subject',
        'ticket_number',
      ])
      assert.match(row.last_updated, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
      assert.deepEqual(list.body.data.pagination, { page: 1, limit: 25, total: 3, total_pages: 1 })

      const paged = await t.request('GET', '/account/tickets?limit=2&page=2', { key: c.key })
      assert.deepEqual(
        paged.body.data.tickets.map((x: { ticket_number: number }) => x.ticket_number),
        [numbers[1]],
      )
      assert.deepEqual((await t.request('GET', '/account/tickets?limit=2&page=3', { key: c.key })).body, {
        status: 400,
        status_description: 'Page out of range',
      })

      const bySubject = await t.request('GET', '/account/tickets?search=vps', { key: c.key })
      assert.deepEqual(
        bySubject.body.data.tickets.map((x: { ticket_number: number }) => x.ticket_number),
        [numbers[1]],
      )
      const byNumber = await t.request('GET', `/account/tickets?search=${String(numbers[2]).slice(-4)}`, { key: c.key })
      assert.ok(byNumber.body.data.tickets.some((x: { ticket_number: number }) => x.ticket_number === numbers[2]))
      assert.ok(
        byNumber.body.data.tickets.every((x: { ticket_number: number; subject: string }) =>
          String(x.ticket_number).includes(String(numbers[2]).slice(-4)),
        ),
      )
      const none = await t.request('GET', '/account/tickets?search=%25', { key: c.key })
      assert.equal(none.body.data.pagination.total, 0)
    })

    it("answers 404 Ticket not found for a missing ticket and another account's, 403 Access denied without account-tickets", async () => {
      const b = await t.account()
      const theirs = (await open(b.key, 'Private')).body.data.ticket_number
      for (const n of [999999999, theirs]) {
        assert.deepEqual((await t.request('GET', `/account/tickets/${n}`, { key: a.key })).body, {
          status: 404,
          status_description: 'Ticket not found',
        })
        assert.deepEqual(
          (await t.request('POST', `/account/tickets/${n}/reply`, { key: a.key, body: { message: 'x' } })).body,
          { status: 404, status_description: 'Ticket not found' },
        )
      }
      const mine = (await open(a.key, 'Mine')).body.data.ticket_number
      const noTickets = await t.subUser(a, { 'account-invoices': true })
      const denied = await t.request('GET', `/account/tickets/${mine}`, { key: noTickets.key })
      assert.equal(denied.status, 403)
      assert.deepEqual(denied.body, { status: 403, status_description: 'Access denied' })
      const withTickets = await t.subUser(a, { 'account-tickets': true })
      assert.deepEqual((await t.request('GET', `/account/tickets/${mine}`, { key: withTickets.key })).body, {
        status: 403,
        status_description: 'Access denied',
      })
    })

    it('lets a sub-user see and answer only its own tickets, and the main user all of the account', async () => {
      const acct = await t.account('Ticket Owners B.V.')
      const one = await t.subUser(acct, { 'account-tickets': true })
      const two = await t.subUser(acct, { 'account-tickets': true })
      const byMain = (await open(acct.key, 'From the main user')).body.data.ticket_number
      const byOne = (await open(one.key, 'From sub-user one')).body.data.ticket_number
      const byTwo = (await open(two.key, 'From sub-user two')).body.data.ticket_number
      const listed = async (key: string, query = '') =>
        (await t.request('GET', `/account/tickets/${query}`, { key })).body.data.tickets
          .map((x: { ticket_number: number }) => x.ticket_number)
          .sort()
      assert.deepEqual(await listed(acct.key), [byMain, byOne, byTwo].sort())
      assert.deepEqual(await listed(one.key), [byOne])
      assert.deepEqual(await listed(two.key), [byTwo])
      const paged = await t.request('GET', '/account/tickets/?search=From', { key: one.key })
      assert.equal(paged.body.data.pagination.total, 1)

      const denied = { status: 403, status_description: 'Access denied' }
      for (const n of [byMain, byTwo]) {
        assert.deepEqual((await t.request('GET', `/account/tickets/${n}`, { key: one.key })).body, denied, String(n))
        const reply = await t.request('POST', `/account/tickets/${n}/reply`, { key: one.key, body: { message: 'Me?' } })
        assert.deepEqual(reply.body, denied, String(n))
      }
      assert.equal((await t.request('GET', `/account/tickets/${byOne}`, { key: one.key })).status, 200)
      const own = await t.request('POST', `/account/tickets/${byOne}/reply`, {
        key: one.key,
        body: { message: 'More' },
      })
      assert.equal(own.status, 200)
      for (const n of [byMain, byOne, byTwo]) {
        assert.equal((await t.request('GET', `/account/tickets/${n}`, { key: acct.key })).status, 200, String(n))
      }
      const mainReply = await t.request('POST', `/account/tickets/${byTwo}/reply`, {
        key: acct.key,
        body: { message: 'The main user answers too' },
      })
      assert.equal(mainReply.status, 200)
      const other = await t.account()
      assert.deepEqual((await t.request('GET', `/account/tickets/${byOne}`, { key: other.key })).body, {
        status: 404,
        status_description: 'Ticket not found',
      })
    })

    it('threads customer replies and support answers, mails both ways, and refuses replies to a closed ticket', async () => {
      const n = (await open(a.key, 'Thread')).body.data.ticket_number
      clock.advance(1000)
      const answered = await t.ctx.services.tickets.supportReply(n, {
        author: 'Support desk',
        message: '<p>Fixed, <a href="https://status.example">see status</a>.</p>',
      })
      assert.equal(answered.status, 'answered')
      await t.ctx.jobs.drain()
      const customer = (await outbox.list()).find((m) => m.kind === 'ticket.answered' && m.subject.includes(`#${n}`))!
      assert.match(customer.text_body, /Fixed, see status\./)
      clock.advance(1000)
      const reply = await t.request('POST', `/account/tickets/${n}/reply`, {
        key: a.key,
        body: { message: 'Thanks <b>a lot</b>' },
      })
      assert.equal(reply.status, 200)
      assert.equal(reply.body.status_description, 'Reply added')
      assert.equal(reply.body.data.status, 'open')
      assert.deepEqual(
        reply.body.data.thread.map((m: { from: string }) => m.from),
        ['user', 'support', 'user'],
      )
      assert.equal(reply.body.data.thread[1].author, 'Support desk')
      assert.equal(reply.body.data.thread[2].body, 'Thanks <b>a lot</b>')
      await t.ctx.jobs.drain()
      assert.ok(
        (await outbox.list({ to: 'desk@hosting.example' })).some(
          (m) => m.kind === 'ticket.reply' && m.subject.includes(`#${n}`),
        ),
      )
      await t.ctx.services.tickets.close(n)
      const closed = await t.request('POST', `/account/tickets/${n}/reply`, {
        key: a.key,
        body: { message: 'One more' },
      })
      assert.deepEqual(closed.body, { status: 400, status_description: 'This ticket is closed; open a new ticket' })
    })

    it('validates the department, subject and message', async () => {
      const dept = await open(a.key, 'x', 'y', 'legal')
      assert.equal(dept.status, 400)
      assert.match(dept.body.status_description, /department/)
      const noSubject = await t.request('POST', '/account/tickets', {
        key: a.key,
        body: { message: 'y', department: 'sales' },
      })
      assert.deepEqual(noSubject.body.status_description, 'Missing subject')
      const empty = await t.request('POST', '/account/tickets', {
        key: a.key,
        body: { subject: 's', message: '', department: 'sales' },
      })
      assert.equal(empty.status, 400)
      const n = (await open(a.key, 'Validation')).body.data.ticket_number
      assert.equal(
        (await t.request('POST', `/account/tickets/${n}/reply`, { key: a.key, body: {} })).body.status_description,
        'Missing message',
      )
      assert.equal((await t.request('GET', '/account/tickets/abc', { key: a.key })).status, 400)
    })
  })
})
