import fs from 'node:fs'
import puppeteer, { type Browser, type Page } from 'puppeteer-core'
import { withDeadline } from './wait.js'

/** Debian's chromium, which the browser tests drive (`.ci/run` installs it). */
export const CHROMIUM = '/usr/bin/chromium'

/** Why the browser tests cannot run here, or false when they can. */
export const noBrowser = (): string | false =>
  fs.existsSync(CHROMIUM) ? false : `chromium is not installed (${CHROMIUM}; Debian package chromium)`

export interface TestBrowser {
  browser: Browser
  /** The browser's process id, by which close() ends it when it does not exit by itself. */
  pid: number
  close(): Promise<void>
}

/**
 * Starts a headless chromium of the test's own (its own profile directory, no sandbox when run as root), which
 * trusts any certificate: the test apps serve HTTPS with a self-signed one.
 */
export async function startBrowser(): Promise<TestBrowser> {
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    acceptInsecureCerts: true,
    args: [
      ...(process.getuid?.() === 0 ? ['--no-sandbox'] : []),
      '--disable-dev-shm-usage',
      '--disable-gpu',
      '--no-first-run',
      '--disable-extensions',
    ],
  })
  const pid = browser.process()?.pid
  if (pid === undefined) throw new Error('chromium started without a process id')
  return {
    browser,
    pid,
    async close() {
      // A browser that does not close in 5 s is killed below all the same.
      await withDeadline(browser.close(), 5000, 'chromium to close').catch(() => undefined)
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // Already gone.
      }
    },
  }
}

/**
 * Clicks the first element matching `selector` inside the page, in one step: the page's lists re-render as data
 * arrives, and an element found by one call and clicked by the next (puppeteer's `click`) may be gone by then
 * ("Node is detached from document"). Waits for the element first.
 */
export async function clickNow(page: Page, selector: string): Promise<void> {
  await page.waitForSelector(selector)
  const clicked = await page.evaluate((s) => {
    const el = document.querySelector<HTMLElement>(s)
    el?.click()
    return el !== null
  }, selector)
  if (!clicked) throw new Error(`nothing to click at ${selector}`)
}
