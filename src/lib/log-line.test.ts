import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { readableLogLine } from './log-line.js'

describe('readableLogLine', () => {
  it('writes a pino line as time, level, message and fields', () => {
    const time = new Date(2026, 0, 2, 3, 4, 5).getTime()
    const json = JSON.stringify({ level: 40, time, pid: 1, hostname: 'h', dataDir: '/d', mode: '755', msg: 'open' })
    assert.equal(readableLogLine(`${json}\n`), '03:04:05 WARN  open dataDir=/d mode=755\n')
    const nested = JSON.stringify({ level: 30, time, msg: 'up', dns: { port: 53 } })
    assert.equal(readableLogLine(nested), '03:04:05 INFO  up dns={"port":53}\n')
  })

  it('puts an error stack below, indented, and leaves a line that is not JSON alone', () => {
    const json = JSON.stringify({
      level: 50,
      time: 0,
      msg: 'failed',
      err: { message: 'boom', stack: 'Error: boom\n    at x' },
    })
    assert.match(readableLogLine(json), /ERROR failed\n {2}Error: boom\n {6}at x\n$/)
    assert.equal(readableLogLine('plain text\n'), 'plain text\n')
  })
})
