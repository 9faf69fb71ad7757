import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import type { Page } from 'puppeteer-core'
import { startTestApp, tempDir, type TestApp } from './helpers/app.js'
import { clickNow, noBrowser, startBrowser, type TestBrowser } from './helpers/browser.js'
import { startReceiver, type Receiver } from './helpers/webhook-receiver.js'
import { freePort } from './helpers/dns.js'
import { INSPECTOR_CSP } from '../src/http/inspector.js'

// The sandbox inspector in a real browser (Debian's chromium driven by puppeteer-core): calls made by the test
// appear in its live list, and what is done on the page (clock, faults, redelivery) shows in the API. One dialect:
// the page reads the admin API, whose answers the other suites check on both databases.

const KEY = 'sandbox-inspect-main-key-0000000001'
const DOMAIN = 'inspect-sandbox.nl'

const seed = [
  'accounts:',
  '  - name: Inspect B.V.',
  '    email: owner@inspect-sandbox.nl',
  '    keys:',
  `      - key: ${KEY}`,
  '    domains:',
  `      - name: ${DOMAIN}`,
  '        renewal_date: "2030-01-15"',
  '        records:',
  '          - { type: A, name: "@", value: 192.0.2.10 }',
  '          - { type: TXT, name: www, value: hello-inspector }',
  '',
].join('\n')

describe('sandbox inspector', { skip: noBrowser() }, () => {
  let t: TestApp
  let b: TestBrowser
  let page: Page
  let receiver: Receiver
  let dir: string
  let token: string

  before(async () => {
    dir = tempDir()
    fs.writeFileSync(path.join(dir, 'seed.yaml'), seed)
    receiver = await startReceiver(dir)
    t = await startTestApp('sqlite', {
      env: {
        HOSTAPI_SANDBOX: '1',
        HOSTAPI_DNS_PORT: String(await freePort()),
        HOSTAPI_SEED_FILE: path.join(dir, 'seed.yaml'),
        HOSTAPI_WEBHOOKS_CA_FILE: receiver.caFile,
        HOSTAPI_WEBHOOKS_TIMEOUT_MS: '1000',
      },
    })
    token = (await t.ctx.services.admin.createToken('inspector')).token
    b = await startBrowser()
    page = await b.browser.newPage()
    page.setDefaultTimeout(10_000)
    await page.setViewport({ width: 1280, height: 800 })
  })
  after(async () => {
    await b?.close()
    await t?.close()
    await receiver?.close()
    fs.rmSync(dir, { recursive: true, force: true })
  })

  const adm = (method: string, p: string, body?: unknown) =>
    t.request(method, `/admin/v1${p}`, { body, headers: { authorization: `Bearer ${token}` } })
  /** Shows a view and waits until it has loaded. */
  const view = async (name: string) => {
    await page.evaluate((n) => {
      if (location.hash === `#${n}`) return
      document.getElementById(n)?.removeAttribute('data-ready')
      location.hash = n
    }, name)
    await page.waitForSelector(`#${name}[data-ready="true"]:not([hidden])`)
  }
  const textOf = (selector: string) => page.$eval(selector, (el) => el.textContent ?? '')
  const waitForText = (selector: string, text: string) =>
    page.waitForFunction(
      (s, x) => [...document.querySelectorAll(s)].some((el) => (el.textContent ?? '').includes(x)),
      { timeout: 10_000 },
      selector,
      text,
    )
  const fill = async (selector: string, value: string) => {
    await page.$eval(selector, (el) => {
      ;(el as HTMLInputElement).value = ''
    })
    await page.type(selector, value)
  }

  it('serves the page with its own files only, no inline script, and asks for the admin token', async () => {
    const res = await t.request('GET', '/sandbox')
    assert.equal(res.status, 200)
    assert.equal(res.headers['content-security-policy'], INSPECTOR_CSP)
    assert.match(String(res.headers['content-type']), /^text\/html/)
    assert.doesNotMatch(res.text, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script')
    assert.doesNotMatch(res.text, /https?:\/\//, 'no third-party asset')
    assert.equal(
      (await t.request('GET', '/sandbox/inspector.js')).headers['content-type'],
      'text/javascript; charset=utf-8',
    )
    assert.equal((await t.request('GET', '/sandbox/..%2Fapp.ts')).status, 404)
    assert.equal((await t.request('GET', '/sandbox/nothing.js')).status, 404)

    const refusals: string[] = []
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) refusals.push(m.text())
    })
    await page.goto(`${t.origin}/sandbox`)
    await page.waitForSelector('#login:not([hidden])')
    await page.type('#token', 'adm_wrong-token')
    await page.keyboard.press('Enter')
    await waitForText('#status', 'refused')
    await page.type('#token', token)
    await page.keyboard.press('Enter')
    await page.waitForSelector('#requests[data-ready="true"]:not([hidden])')
    assert.deepEqual(refusals, [], 'the page breaks none of its own policy')
  })

  it('lists customer API calls live and opens one: method, path, operation, key, status, duration, bodies, headers', async () => {
    assert.equal((await t.request('GET', '/whoami', { key: KEY })).status, 200)
    const bad = await t.request('POST', '/vps/ssh-keys', { key: KEY, body: { name: 'inspect', public_key: 'nope' } })
    assert.equal(bad.status, 400)
    await waitForText('#request-list tbody', '/api/v2/whoami')
    await waitForText('#request-list tbody', '/api/v2/vps/ssh-keys')
    const row = await textOf('#request-list tbody tr:last-child')
    for (const part of ['GET', '/api/v2/whoami', 'whoami', `${KEY.slice(0, 8)}`, '200', 'ms'])
      assert.ok(row.includes(part), `the row shows ${part}: ${row}`)
    assert.ok(!(await textOf('#request-list')).includes(KEY), 'the key is never shown in full')

    // Filter by status, then open the failed call with the keyboard.
    await page.select('select[name="status"]', '4xx')
    await page.waitForFunction(() => document.querySelectorAll('#request-list tbody tr').length === 1)
    await page.focus('#request-list tbody tr button')
    await page.keyboard.press('Enter')
    await page.waitForSelector('#request-detail:not([hidden])')
    const detail = await textOf('#request-detail')
    assert.match(detail, /POST \/api\/v2\/vps\/ssh-keys → 400/)
    assert.match(detail, /"public_key": "nope"/, 'the request body')
    assert.match(detail, /"api-key": "\[redacted\]"/, 'the request headers, the key masked')
    assert.match(detail, /"status": 400/, 'the answer body')
    assert.match(detail, /"content-type": "application\/json/, 'the answer headers')
    await page.select('select[name="status"]', '')
  })

  it('advances the clock from the page, and the renewal job that became due runs', async () => {
    const ordered = await t.request('POST', '/domains/order', { key: KEY, body: { domain: 'renew-inspect.com' } })
    assert.equal(ordered.status, 200, ordered.text)
    await t.ctx.jobs.drain()
    const before = (await t.request('GET', '/domains/renew-inspect.com', { key: KEY })).body.data.renewal_date
    await view('control')
    await fill('#advance-form input[name="advance"]', '400d')
    await clickNow(page, '#advance-form button[type="submit"]')
    await waitForText('#clock-result', 'jobs ran')
    const renewed = (await t.request('GET', '/domains/renew-inspect.com', { key: KEY })).body.data.renewal_date
    assert.equal(Number(renewed.slice(0, 4)), Number(before.slice(0, 4)) + 1, `renewed: ${before} → ${renewed}`)
    assert.match(await textOf('#clock'), /\+40\d(\.\d)? days/)
    await view('work')
    await waitForText('#jobs', 'domains.renew')
  })

  it('adds a fault from the page, and the next call of that operation fails with it', async () => {
    await view('control')
    await fill('#fault-form input[name="operation"]', 'whoami')
    await fill('#fault-form input[name="status"]', '503')
    await fill('#fault-form input[name="count"]', '1')
    await clickNow(page, '#fault-form details summary')
    await fill('#fault-form input[name="key_prefix"]', KEY.slice(0, 8))
    await clickNow(page, '#fault-form button[type="submit"]')
    await waitForText('#faults', 'whoami')
    assert.match(
      await textOf('#faults'),
      new RegExp(`whoami.*503.*1.*0.*${KEY.slice(0, 8)}`),
      'listed with its key prefix',
    )
    const failed = await t.request('GET', '/whoami', { key: KEY })
    assert.equal(failed.status, 503)
    assert.equal((await t.request('GET', '/whoami', { key: KEY })).status, 200, 'one firing only')
    await view('requests')
    await waitForText('#request-list tbody', '503')
  })

  it('empties the live list when the journal is cleared from anywhere (here the admin API)', async () => {
    await view('requests')
    await t.request('GET', '/whoami', { key: KEY })
    await page.waitForFunction(() => document.querySelectorAll('#request-list tbody tr[data-id]').length > 0)
    assert.equal((await adm('DELETE', '/sandbox/journal')).status, 200)
    await waitForText('#request-list tbody', 'No calls yet')
    await t.request('GET', '/whoami', { key: KEY })
    await page.waitForFunction(() => document.querySelectorAll('#request-list tbody tr[data-id]').length === 1)
  })

  it('shows a failed webhook delivery with its body, signed headers and answer, and redelivers it', async () => {
    const hook = await t.request('POST', '/account/webhooks', {
      key: KEY,
      body: { url: `${receiver.origin}/inspect`, events: ['*'] },
    })
    assert.equal(hook.status, 200, hook.text)
    receiver.answer(500)
    await view('control')
    await fill('#event-form input[name="type"]', 'domain.status.changed')
    await clickNow(page, '#event-form button[type="submit"]')
    await waitForText('#status', 'sent to 1 endpoints')
    await view('work')
    await clickNow(page, '#work form button:nth-of-type(3)') // Flush webhooks
    await waitForText('#deliveries', 'domain.status.changed')
    await receiver.waitFor(1)
    await page.select('select[name="deliveryStatus"]', 'pending')
    await waitForText('#deliveries', '500')
    await clickNow(page, '#deliveries tbody tr button')
    await page.waitForSelector('#work-detail:not([hidden])')
    const detail = await textOf('#work-detail')
    assert.match(detail, /The receiver answered 500/)
    assert.equal(await textOf('#delivery-answer'), '500')
    const sent = receiver.received[0]
    assert.ok(detail.includes(sent.headers['webhook-signature']), 'the signature the receiver got')
    assert.ok(detail.includes('"type": "domain.status.changed"'), 'the body')

    await page.evaluate(() => {
      for (const button of document.querySelectorAll<HTMLElement>('#work-detail button'))
        if (button.textContent === 'Redeliver') button.click()
    })
    await waitForText('#status', 'sent again as delivery')
    await adm('POST', '/sandbox/webhooks/flush', { all: true })
    await receiver.waitFor(2)
    assert.equal(receiver.received[1].headers['webhook-id'], sent.headers['webhook-id'], 'the same event again')
  })

  it("shows an account's state: domains with records and the built-in DNS server's answers, each with its raw JSON", async () => {
    await view('state')
    await waitForText('#account-state', DOMAIN)
    await clickNow(page, '#account-state details.domain summary')
    const text = await textOf('#account-state')
    assert.ok(text.includes('192.0.2.10'), 'the record')
    assert.match(
      text,
      new RegExp(`www\\.${DOMAIN.replace('.', '\\.')}\\s+\\d+\\s+TXT\\s+hello-inspector`),
      'the answer',
    )
    assert.match(text, /renew-inspect\.com/)
    await clickNow(page, '#account-state section.block h3 button.link')
    await waitForText('#account-state .raw', `GET /admin/v1/accounts/`)
  })

  it('fits 1280×800 and a phone width without sideways scrolling', async () => {
    for (const [width, height] of [
      [1280, 800],
      [390, 844],
    ]) {
      await page.setViewport({ width, height })
      for (const name of ['requests', 'state', 'work', 'control']) {
        await view(name)
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)
        assert.ok(overflow <= 0, `${name} at ${width}px is ${overflow}px too wide`)
      }
    }
    await page.setViewport({ width: 1280, height: 800 })
  })
})
