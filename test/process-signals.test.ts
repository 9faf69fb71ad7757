import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { execFile, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { DRAIN_MS } from '../src/cli/serve.js'
import { tempDir } from './helpers/app.js'
import { descendants, spawnServer, type ServerProcess } from './helpers/process.js'
import { eventually } from './helpers/wait.js'

// The server as an operator starts it: `npm start` in the release, `npx hostapi serve` where it is installed, and
// what a service manager runs. The supervisor signals the process it started; the server must be the one to stop.
const root = new URL('..', import.meta.url).pathname
const run = promisify(execFile)

/** Whether process `pid` still runs (a zombie, ended but not yet reaped, does not). */
function alive(pid: number): boolean {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, { encoding: 'utf8', flag: 'r' }).toString()
  return !/^\d+ \(.*\) Z/.test(stat)
}
const running = (pid: number) => {
  try {
    return alive(pid)
  } catch {
    return false
  }
}

/**
 * The pid of the server: the `pid` of its JSON start line, as a supervisor's log shows it (or, from a server that
 * does not print one, the node process running main.js under `top`); checked to run under `top`.
 */
async function serverPid(p: ServerProcess): Promise<number> {
  await p.waitFor(/^hostapi listening on https:/, 120_000)
  const line = p.lines.find((l) => l.startsWith('{') && l.includes('"msg":"hostapi listening on'))
  const under = descendants(p.child.pid!)
  const printed = line ? (JSON.parse(line) as { pid: number }).pid : null
  const pid =
    printed ?? under.find((d) => fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').includes('dist/src/cli/main.js'))
  assert.ok(pid && under.includes(pid), `server ${pid} runs under ${p.child.pid}`)
  return pid
}

/**
 * Starts the server with `argv` in `cwd`, sends SIGTERM to the process started (only it, as a supervisor does), and
 * answers how the server process ended: whether it was gone within the drain time, and the log lines it wrote.
 */
async function stopTopProcess(cwd: string, argv: string[]) {
  const dataDir = tempDir()
  const env = {
    HOME: process.env.HOME ?? '/root',
    HOSTAPI_DATA_DIR: dataDir,
    HOSTAPI_HOST: '127.0.0.1',
    HOSTAPI_PORT: '0',
    HOSTAPI_DNS_PORT: '0',
    HOSTAPI_DEMO: '0',
    HOSTAPI_JOBS: '0',
    HOSTAPI_LOG_LEVEL: 'info',
    npm_config_update_notifier: 'false',
  }
  const top = spawnServer(env, { argv, cwd })
  let pid = 0
  try {
    pid = await serverPid(top)
    assert.notEqual(pid, top.child.pid, 'the server runs under the command started')
    top.child.kill('SIGTERM')
    await eventually(async () => !running(pid), {
      what: 'the server process has ended',
      timeoutMs: DRAIN_MS + 5000,
    }).catch(() => undefined)
    const gone = !running(pid)
    // The command itself has ended (its output stays open while a server left over from it runs).
    if (top.child.exitCode === null && top.child.signalCode === null)
      await new Promise((resolve) => top.child.once('exit', resolve))
    return { gone, lines: top.lines, pid, stderr: top.stderr() }
  } finally {
    // Only what this test started: the command, and the server it ran when it is left over.
    top.child.kill('SIGKILL')
    if (pid && running(pid)) process.kill(pid, 'SIGKILL')
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

/** The log line that says why the server stopped. */
const stopLine = (lines: string[]) =>
  lines.map((l) => (l.startsWith('{') ? JSON.parse(l) : {})).find((e) => /finishing in-flight/.test(e.msg ?? ''))

describe('a clean process: the stop signal reaches the server', () => {
  let installed: string
  before(async () => {
    // What `npm start` runs first; the release an operator installs is built.
    await run(process.execPath, ['scripts/build.mjs', '--if-changed'], { cwd: root, timeout: 1_200_000 })
    installed = tempDir()
    fs.writeFileSync(path.join(installed, 'package.json'), '{"name":"operator","private":true}')
    await run('npm', ['install', '--offline', '--ignore-scripts', '--no-audit', '--no-fund', root], {
      cwd: installed,
      timeout: 120_000,
    })
  })
  after(() => fs.rmSync(installed, { recursive: true, force: true }))

  it('npm start: npm passes SIGTERM to the server itself, which stops within the drain time', async () => {
    const r = await stopTopProcess(root, ['npm', 'start'])
    assert.ok(r.gone, `server ${r.pid} still ran after SIGTERM to npm start`)
    assert.equal(stopLine(r.lines)?.signal, 'SIGTERM', r.lines.join('\n'))
  })

  it('npx hostapi serve where hostapi is installed: the server stops when npx is signalled', async () => {
    const r = await stopTopProcess(installed, ['npx', 'hostapi', 'serve'])
    assert.ok(r.gone, `server ${r.pid} still ran after SIGTERM to npx`)
    assert.ok(stopLine(r.lines), r.lines.join('\n'))
  })

  it('the bin is the node script itself: no shell or wrapper between the command and the server', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'))
    const bin = fs.readFileSync(path.join(root, pkg.bin.hostapi), 'utf8')
    assert.match(bin, /^#!\/usr\/bin\/env node\n/)
    assert.match(pkg.scripts.start, /^exec node /)
    const linked = fs.realpathSync(path.join(installed, 'node_modules', '.bin', 'hostapi'))
    assert.equal(linked, fs.realpathSync(path.join(root, pkg.bin.hostapi)))
  })
})

describe('the systemd unit (deploy/hostapi.service)', () => {
  const unitFile = path.join(root, 'deploy', 'hostapi.service')
  const unit = fs.readFileSync(unitFile, 'utf8')
  const keys = new Map<string, string[]>()
  let section = ''
  for (const raw of unit.split('\n')) {
    const line = raw.trim()
    if (line === '' || line.startsWith('#')) continue
    const header = /^\[(\w+)\]$/.exec(line)
    if (header) {
      section = header[1]!
      continue
    }
    const [key, ...value] = line.split('=')
    const name = `${section}.${key}`
    keys.set(name, [...(keys.get(name) ?? []), value.join('=')])
  }
  const one = (name: string) => keys.get(name)?.at(-1)

  it('runs node directly as a user of its own, with the env file, restarts on failure, stops after the drain', () => {
    assert.match(one('Service.ExecStart') ?? '', /^\/usr\/bin\/node \S+\/dist\/src\/cli\/main\.js serve$/)
    assert.ok(one('Service.User') && one('Service.User') !== 'root', 'a user other than root')
    assert.ok(one('Service.EnvironmentFile'))
    assert.equal(one('Service.Restart'), 'on-failure')
    assert.equal(one('Service.KillSignal'), 'SIGTERM')
    assert.ok(Number(one('Service.TimeoutStopSec')) > DRAIN_MS / 1000, 'the stop timeout exceeds the drain time')
    assert.equal(one('Service.ExecReload'), '/bin/kill -HUP $MAINPID')
  })

  it('systemd-analyze verify accepts it', {
    skip: spawnSync('systemd-analyze', ['--version']).status !== 0 && 'systemd-analyze is not installed',
  }, () => {
    // The unit names /usr/bin/node; verify checks that the command exists, so this machine's node stands in.
    const dir = tempDir()
    try {
      const copy = path.join(dir, 'hostapi.service')
      fs.writeFileSync(copy, unit.replace('/usr/bin/node ', `${process.execPath} `))
      const r = spawnSync('systemd-analyze', ['verify', copy], { encoding: 'utf8' })
      assert.equal(r.status, 0, r.stderr)
      // It reports a key it cannot parse on stderr and goes on: nothing may be reported.
      assert.equal(r.stderr.trim(), '')
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
