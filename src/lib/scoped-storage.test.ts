import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { ScopedStorage } from './scoped-storage.js'
import { sourceFiles } from '../../test/helpers/source-files.js'
import fs from 'node:fs'

const here = path.dirname(new URL(import.meta.url).pathname)

describe('ScopedStorage', () => {
  it('gives each scope its own value across awaits, and none outside a scope', async () => {
    const s = new ScopedStorage<string>()
    const seen: (string | undefined)[] = []
    const scope = (v: string) =>
      s.run(v, async () => {
        await new Promise((resolve) => setImmediate(resolve))
        seen.push(s.getStore())
        await null
        seen.push(s.getStore())
      })
    await Promise.all([scope('a'), scope('b')])
    assert.deepEqual(seen.sort(), ['a', 'a', 'b', 'b'])
    assert.equal(s.getStore(), undefined)
    assert.equal(
      s.run('sync', () => s.getStore()),
      'sync',
    )
    assert.throws(() =>
      s.run('thrown', () => {
        throw new Error('no')
      }),
    )
    await assert.rejects(s.run('rejected', async () => Promise.reject(new Error('no'))))
    assert.equal(s.getStore(), undefined)
  })

  // In a process of its own: the test runner keeps async hooks on in its own processes. A promise continuation has
  // an async id only while a hook tracks promises.
  it('turns the async hooks off once no scope has run for its idle time', () => {
    const script = `
      import { executionAsyncId } from 'node:async_hooks'
      import { ScopedStorage, openScopes } from ${JSON.stringify(path.join(here, 'scoped-storage.ts'))}
      const tracked = async () => { await null; return executionAsyncId() !== 0 }
      // Polls (each turn) until the hooks are off; false after 10 s.
      const off = async () => {
        const end = Date.now() + 10_000
        while (await tracked()) {
          if (Date.now() > end) return false
          await new Promise((r) => setImmediate(r))
        }
        return true
      }
      const s = new ScopedStorage(50)
      const out = { before: await tracked() }
      let release
      const held = s.run(1, () => new Promise((r) => { release = r }))
      await s.run(2, async () => { await null })
      out.oneOpen = [await tracked(), openScopes()]
      // Read before the last scope ends: the idle time counts from its end, no earlier than this.
      const ended = Date.now()
      release()
      await held
      out.justEnded = [await tracked(), openScopes()]
      out.off = await off()
      out.idleWaited = Date.now() - ended >= 50
      await s.run(3, async () => { await null })
      out.offAgain = await off()
      process.stdout.write(JSON.stringify(out))
    `
    const out = JSON.parse(
      execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' }),
    )
    assert.deepEqual(out, {
      before: false,
      oneOpen: [true, 1],
      justEnded: [true, 0],
      off: true,
      idleWaited: true,
      offAgain: true,
    })
  })

  it('is the only user of AsyncLocalStorage in src/', () => {
    const src = path.join(here, '..')
    const users = sourceFiles(src).filter(
      (f) =>
        !f.endsWith(path.join('lib', 'scoped-storage.ts')) && /\bAsyncLocalStorage\b/.test(fs.readFileSync(f, 'utf8')),
    )
    assert.deepEqual(
      users,
      [],
      'a value that follows a call goes through ScopedStorage, which turns the hooks off again',
    )
  })
})
