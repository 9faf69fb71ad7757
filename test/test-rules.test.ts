import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { consistently, DeadlineError, eventually, withDeadline } from './helpers/wait.js'

// Tests wait for events and conditions, not for time: every timer of the test code is in test/helpers/wait.ts
// (eventually, consistently, withDeadline, stopOrKill, later, pace), see docs/testing.md.
const testDir = new URL('.', import.meta.url).pathname
const ALLOWED = [path.join('helpers', 'wait.ts'), 'test-rules.test.ts']

function testFiles(dir: string): string[] {
  const out: string[] = []
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) out.push(...testFiles(full))
    else if (entry.name.endsWith('.ts')) out.push(full)
  }
  return out
}

/** Each line `find` picks out of each file, as `<file relative to test/>: <line>`. */
function offendingLines(files: string[], find: (text: string) => string[]): string[] {
  return files.flatMap((file) =>
    find(fs.readFileSync(file, 'utf8')).map((line) => `${path.relative(testDir, file)}: ${line.trim()}`),
  )
}

/** The lines of `text` that start a timer of their own: a call of the global setTimeout, or node:timers/promises. */
export function timerLines(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => /(?<![\w.$])setTimeout\s*\(|timers\/promises/.test(line))
    .map((line) => line.trim())
}

describe('test code rules', () => {
  it('finds a timer of its own (the rule below can fail)', () => {
    assert.deepEqual(timerLines('await new Promise((r) => setTimeout(r, 50))\nreq.setTimeout(1000, f)\n'), [
      'await new Promise((r) => setTimeout(r, 50))',
    ])
    assert.equal(timerLines("import { setTimeout as sleep } from 'node:timers/promises'").length, 1)
  })

  it('no setTimeout or node:timers/promises under test/ outside test/helpers/wait.ts', () => {
    const offending = offendingLines(
      testFiles(testDir).filter((file) => !ALLOWED.includes(path.relative(testDir, file))),
      timerLines,
    )
    assert.deepEqual(offending, [], 'wait with eventually(), for the event, or with the sandbox clock instead')
  })
})

/** How many processes `text` starts with spawn(), and how many it hands to owned() (test/helpers/children.ts). */
export function spawnsAndOwned(text: string): { spawns: number; owned: number } {
  return {
    spawns: text.match(/(?<![\w.$])spawn\s*\(/g)?.length ?? 0,
    owned: text.match(/(?<![\w.$])owned\s*\(/g)?.length ?? 0,
  }
}

describe('processes the tests start', () => {
  it('counts spawns and owned children (the rule below can fail)', () => {
    assert.deepEqual(spawnsAndOwned("const c = spawn('x', [])\nconst d = owned(spawn('y', []))\nspawnServer(env)"), {
      spawns: 2,
      owned: 1,
    })
  })

  it('every process a test spawns is owned: killed when the test process exits, if a failed test left it running', () => {
    const offending = testFiles(testDir)
      .filter((file) => !ALLOWED.includes(path.relative(testDir, file)))
      .filter((file) => path.relative(testDir, file) !== path.join('helpers', 'children.ts'))
      .flatMap((file) => {
        const { spawns, owned } = spawnsAndOwned(fs.readFileSync(file, 'utf8'))
        return spawns > owned ? [`${path.relative(testDir, file)}: ${spawns} spawn(), ${owned} owned()`] : []
      })
    assert.deepEqual(offending, [], 'hand each spawned child to owned() from test/helpers/children.ts')
  })
})

/** The lines of `text` that run migrations (migrate(), migrateToLatest()) with no whileSchemasStay( on them or the line before. */
export function unlockedMigrations(text: string): string[] {
  const lines = text.split('\n')
  return lines.filter(
    (line, i) =>
      /(?<![\w.$])migrate\s*\(|\.migrateToLatest\s*\(/.test(line) &&
      !/^\s*(\/\/|\*)/.test(line) &&
      !/\bfunction\b/.test(line) &&
      !/whileSchemasStay\s*\(/.test(line) &&
      !/whileSchemasStay\s*\(/.test(lines[i - 1] ?? ''),
  )
}

describe('migrations the tests run', () => {
  it('finds a migration run outside whileSchemasStay (the rule below can fail)', () => {
    assert.deepEqual(
      unlockedMigrations(
        'await migrate(db, null)\nawait whileSchemasStay(d, () => migrate(db, s))\nx()\nawait m.migrateToLatest()\n// migrate()',
      ),
      ['await migrate(db, null)', 'await m.migrateToLatest()'],
    )
  })

  // The migrator reads every schema of the database, and fails on a test schema another test drops meanwhile.
  it('every migration a test runs in its own process runs while no test schema is dropped (whileSchemasStay)', () => {
    const offending = offendingLines(
      testFiles(testDir).filter((file) => path.relative(testDir, file) !== 'test-rules.test.ts'),
      unlockedMigrations,
    )
    assert.deepEqual(offending, [], 'run it in whileSchemasStay() from test/helpers/app.ts')
  })
})

describe('the wait helper', () => {
  it('eventually answers the first passing answer; it fails naming what it waited for and the last failure', async () => {
    let n = 0
    assert.equal(await eventually(() => ++n >= 3 && n, { what: 'three tries', intervalMs: 1 }), 3)
    const never = () => {
      throw new Error('not yet')
    }
    await assert.rejects(
      eventually(never, { what: 'never', timeoutMs: 20, intervalMs: 5 }),
      /never: not within 20 ms .*; last: not yet/,
    )
    const stopped = eventually(() => false, { what: 'a process', failIf: () => 'it exited' })
    await assert.rejects(stopped, /a process: it exited; last: the check answered false/)
  })

  it('consistently fails at the first try that fails; withDeadline bounds an operation that hangs', async () => {
    let n = 0
    await assert.rejects(
      consistently(() => ++n < 3, { what: 'holds', forMs: 5000, intervalMs: 1 }),
      /holds: /,
    )
    assert.equal(n, 3)
    await consistently(() => true, { what: 'holds', forMs: 20 })
    await assert.rejects(withDeadline(new Promise(() => undefined), 10, 'a hang'), DeadlineError)
    assert.equal(await withDeadline(Promise.resolve(1), 1000, 'an answer'), 1)
  })
})

/** The lines of `text` that click through puppeteer's two-step click (find, then click), on a page or an element handle. */
export function twoStepClicks(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => /\bpage\.click\s*\(|await\s+[\w.]+\.click\s*\(/.test(line))
    .filter((line) => !/^\s*(\/\/|\*)/.test(line))
    .map((line) => line.trim())
}

describe('clicks in browser tests', () => {
  it("finds puppeteer's two-step clicks (the rule below can fail)", () => {
    assert.deepEqual(
      twoStepClicks(
        "await page.click('#a')\nawait clickNow(page, '#b')\nawait button.click()\nel.click()\n// page.click()",
      ),
      ["await page.click('#a')", 'await button.click()'],
    )
  })

  // The inspector's lists re-render as data arrives: a node found by one call and clicked by the next may be gone.
  it('every click of a browser test or script happens inside the page in one step (clickNow)', () => {
    const scripts = new URL('../scripts/', import.meta.url).pathname
    const offending = offendingLines(
      [...testFiles(testDir), ...testFiles(scripts)].filter((file) => path.basename(file) !== 'test-rules.test.ts'),
      twoStepClicks,
    )
    assert.deepEqual(offending, [], 'use clickNow() from test/helpers/browser.ts')
  })
})
