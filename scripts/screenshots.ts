// `npm run screenshots`: writes docs/inspector/*.png, the inspector's pages as docs/inspector.md shows them. It starts
// a sandbox of its own (SQLite in a temporary directory, a seed, a webhook receiver on loopback that fails the first
// delivery), makes a few customer calls, and photographs each view in Debian's chromium at 1280×800, and the request
// list at a phone's width.
import fs from 'node:fs'
import path from 'node:path'
import { startTestApp, tempDir } from '../test/helpers/app.js'
import { clickNow, noBrowser, startBrowser } from '../test/helpers/browser.js'
import { freePort } from '../test/helpers/dns.js'
import { startReceiver } from '../test/helpers/webhook-receiver.js'

const missing = noBrowser()
if (missing) {
  process.stderr.write(`${missing}\n`)
  process.exit(1)
}
const out = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', 'docs', 'inspector')
// Run from scripts/ (tsx) or dist/scripts (compiled): docs/ is beside package.json.
const docs = fs.existsSync(path.join(out, '..', '..', 'package.json'))
  ? out
  : path.resolve(out, '..', '..', 'docs', 'inspector')
fs.mkdirSync(docs, { recursive: true })

const KEY = 'sandbox-acme-main-key-000000000001'
const dir = tempDir()
fs.writeFileSync(
  path.join(dir, 'seed.yaml'),
  [
    'accounts:',
    '  - name: Acme B.V.',
    '    email: owner@acme-sandbox.nl',
    '    keys:',
    `      - key: ${KEY}`,
    '    domains:',
    '      - name: acme-sandbox.nl',
    '        renewal_date: "2030-01-15"',
    '        records:',
    '          - { type: A, name: "@", value: 192.0.2.10 }',
    '          - { type: MX, name: "@", value: "10 mail.acme-sandbox.nl." }',
    '          - { type: TXT, name: www, value: hello }',
    '',
  ].join('\n'),
)
const receiver = await startReceiver(dir)
const t = await startTestApp('sqlite', {
  env: {
    HOSTAPI_SANDBOX: '1',
    HOSTAPI_SEED_FILE: path.join(dir, 'seed.yaml'),
    HOSTAPI_DNS_PORT: String(await freePort()),
    HOSTAPI_WEBHOOKS_CA_FILE: receiver.caFile,
    HOSTAPI_WEBHOOKS_TIMEOUT_MS: '1000',
  },
})
const b = await startBrowser()
try {
  const token = (await t.ctx.services.admin.createToken('screenshots')).token
  const adm = (method: string, p: string, body?: unknown) =>
    t.request(method, `/admin/v1${p}`, { body, headers: { authorization: `Bearer ${token}` } })

  // Some traffic: reads, an order, a refused call, a webhook endpoint whose receiver fails the first delivery.
  await t.request('GET', '/whoami', { key: KEY })
  await t.request('GET', '/domains', { key: KEY })
  await t.request('GET', '/domains/acme-sandbox.nl/dns', { key: KEY })
  await t.request('POST', '/domains/order', { key: KEY, body: { domain: 'acme-shop.com' } })
  await t.request('POST', '/vps/ssh-keys', { key: KEY, body: { name: 'laptop', public_key: 'not a key' } })
  await t.request('POST', '/account/webhooks', {
    key: KEY,
    body: { url: `${receiver.origin}/hooks`, events: ['*'] },
  })
  await t.ctx.jobs.drain()
  receiver.answer(500)
  await adm('POST', '/sandbox/events', { type: 'domain.status.changed' })
  await adm('POST', '/sandbox/webhooks/flush', { all: true })
  await adm('POST', '/sandbox/faults', { operation: 'getDnsRecords', status: 503, count: 2 })
  await t.request('GET', '/domains/acme-sandbox.nl/dns', { key: KEY })

  const page = await b.browser.newPage()
  page.setDefaultTimeout(15_000)
  await page.setViewport({ width: 1280, height: 800 })
  await page.goto(`${t.origin}/sandbox`)
  await page.waitForSelector('#login:not([hidden])')
  await page.screenshot({ path: path.join(docs, 'login.png') })
  await page.type('#token', token)
  await page.keyboard.press('Enter')
  await page.waitForSelector('#requests[data-ready="true"]')
  await page.waitForFunction(() => document.querySelectorAll('#request-list tbody tr[data-id]').length >= 6)

  const view = async (name: string) => {
    await page.evaluate((n) => {
      if (location.hash === `#${n}`) return
      document.getElementById(n)?.removeAttribute('data-ready')
      location.hash = n
    }, name)
    await page.waitForSelector(`#${name}[data-ready="true"]:not([hidden])`)
  }
  const shot = (name: string) => page.screenshot({ path: path.join(docs, `${name}.png`) })

  await clickNow(page, '#request-list tbody tr:nth-child(2) button')
  await page.waitForSelector('#request-detail:not([hidden])')
  await shot('requests')

  await view('state')
  await page.waitForSelector('#account-state details.domain')
  await clickNow(page, '#account-state details.domain summary')
  await shot('state')

  await view('work')
  await page.select('select[name="deliveryStatus"]', 'pending')
  await page.waitForSelector('#deliveries tbody tr button')
  await clickNow(page, '#deliveries tbody tr button')
  await page.waitForSelector('#work-detail:not([hidden])')
  await shot('work')

  await view('control')
  await page.waitForSelector('#faults tbody tr')
  await shot('control')

  await page.setViewport({ width: 390, height: 844 })
  await view('requests')
  await shot('requests-phone')
  process.stdout.write(`screenshots written to ${docs}\n`)
} finally {
  await b.close()
  await t.close()
  await receiver.close()
  fs.rmSync(dir, { recursive: true, force: true })
}
