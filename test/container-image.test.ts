import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import https from 'node:https'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { lineText } from '../src/lib/log-line.js'
import { freePort } from './helpers/dns.js'
import { checkoutContext, importNodeBase, podmanMissing, startPodman, type Podman } from './helpers/podman.js'
import { eventually } from './helpers/wait.js'

// The image the Containerfile builds, run with podman: the demo answers over HTTPS on a port published on
// 127.0.0.1, the server is not root, SIGTERM (podman stop) ends it cleanly and quickly, and its data outlives the
// container in the volume. No registry is reachable here, so the base image is this machine's Node (see
// importNodeBase) and the dependencies are the checkout's (DEPS=context); the rest of the build is the
// Containerfile's own: tsc where the sources changed, the bundle, the pruning to production dependencies, the
// runtime stage with its user, volume, health check and entry point.

const checkout = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const IMAGE = 'localhost/hostapi-image-test'
const BASE = 'localhost/hostapi-base-test'
const missing = podmanMissing()

describe('container image', { skip: missing ?? false, timeout: 30 * 60_000 }, () => {
  let podman: Podman
  let port: number
  before(async () => {
    podman = await startPodman()
    await importNodeBase(podman, BASE)
    const context = path.join(podman.dir, 'context')
    await checkoutContext(checkout, context)
    const started = Date.now()
    await podman.run(
      [
        'build',
        '--format',
        'docker',
        '--network',
        'none',
        '--layers=false',
        '--build-arg',
        `BASE=${BASE}`,
        '--build-arg',
        'DEPS=context',
        '-f',
        path.join(checkout, 'Containerfile'),
        '-t',
        IMAGE,
        context,
      ],
      25 * 60_000,
    )
    console.log(`container image: built in ${((Date.now() - started) / 1000).toFixed(0)} s`)
    fs.rmSync(context, { recursive: true, force: true })
    port = await freePort()
  })
  after(() => podman?.close())

  /** Starts the image on the volume; resolves with the container's name once its HEALTHCHECK passes. */
  const start = async (name: string): Promise<{ seconds: number }> => {
    const t0 = Date.now()
    await podman.run([
      'run',
      '--detach',
      '--name',
      name,
      ...podman.limits,
      // The health check runs when asked (podman healthcheck run), not from a systemd timer.
      '--health-interval',
      'disable',
      '--network',
      'slirp4netns',
      '--publish',
      `127.0.0.1:${port}:8443`,
      '--volume',
      'hostapi-data:/data',
      IMAGE,
    ])
    await eventually(() => podman.run(['healthcheck', 'run', name]), {
      what: `${name} is healthy`,
      timeoutMs: 120_000,
      intervalMs: 250,
      failIf: async () => {
        const state = (await podman.run(['inspect', '--format', '{{.State.Status}}', name])).stdout.trim()
        return state !== 'running' && `${name} is ${state}: ${(await podman.run(['logs', name])).stderr}`
      },
    })
    return { seconds: (Date.now() - t0) / 1000 }
  }

  const request = (ca: string, method: string, p: string, key: string, body?: unknown) =>
    new Promise<{ status: number; body: { data?: Record<string, unknown> } }>((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body)
      const req = https.request(
        {
          host: '127.0.0.1',
          port,
          method,
          path: `/api/v2${p}`,
          ca,
          headers: { 'api-key': key, ...(payload ? { 'content-type': 'application/json' } : {}) },
        },
        (res) => {
          let text = ''
          res.on('data', (c) => (text += c))
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }))
        },
      )
      req.on('error', reject)
      req.end(payload)
    })

  const records = async (ca: string, key: string) => {
    const r = await request(ca, 'GET', '/domains/demo-blog.com/dns', key)
    assert.equal(r.status, 200)
    return r.body.data!.records as { type: string; name: string; value: string }[]
  }

  /** The demo key a start printed (off a terminal its lines are JSON, the text in `msg`). */
  const demoKeyIn = (logs: string) =>
    logs
      .split('\n')
      .map((line) => /^Demo API key: (\S+)$/.exec(lineText(line))?.[1])
      .find((k) => k !== undefined)

  it('serves the demo as a non-root user, stops on SIGTERM, and keeps its data in the volume', async () => {
    const size = Number((await podman.run(['image', 'inspect', '--format', '{{.Size}}', IMAGE])).stdout)
    const base = Number((await podman.run(['image', 'inspect', '--format', '{{.Size}}', BASE])).stdout)
    console.log(
      `container image: ${(size / 1e6).toFixed(0)} MB, of which ${((size - base) / 1e6).toFixed(0)} MB over the base image`,
    )

    const first = await start('hostapi-1')
    console.log(`container image: healthy ${first.seconds.toFixed(1)} s after podman run (empty volume)`)
    const logs = (await podman.run(['logs', 'hostapi-1'])).stdout
    const key = demoKeyIn(logs)
    assert.ok(key, `the demo key is in the log:\n${logs}`)
    // The server's certificate is signed by the local root it keeps in the volume: the request checks it.
    const caFile = path.join(podman.dir, 'ca.pem')
    await podman.run(['cp', 'hostapi-1:/data/tls-ca.pem', caFile])
    const ca = fs.readFileSync(caFile, 'utf8')

    // PID 1 is node, not a shell, and not root; the image starts from the bundle (its manifest matches the files).
    const inside = async (code: string) =>
      (await podman.run(['exec', 'hostapi-1', 'node', '--input-type=module', '-e', code])).stdout.trim()
    assert.equal(
      await inside(
        "import fs from 'node:fs'; const s = fs.readFileSync('/proc/1/status', 'utf8'); console.log(/^Name:\\s+(\\S+)/m.exec(s)[1], /^Uid:\\s+(\\d+)/m.exec(s)[1])",
      ),
      'node 1000',
    )
    // The data directory is the server's alone: no warning that it is open to others.
    assert.equal(
      await inside(
        "import fs from 'node:fs'; const s = fs.statSync('/data'); console.log(s.uid, (s.mode & 0o777).toString(8))",
      ),
      '1000 700',
    )
    assert.doesNotMatch(logs, /open to group or others/)
    assert.equal(
      await inside(
        "const { currentManifest } = await import('/app/dist/src/cli/bundle.js'); console.log(currentManifest(new URL('file:///app/dist/src/cli/cli.bundle.json')) !== null)",
      ),
      'true',
      'the bundle runs in the image',
    )

    const value = `written-before-restart-${Date.now()}`
    const patch = await request(ca, 'PATCH', '/domains/demo-blog.com/dns', key, {
      record: { type: 'TXT', name: 'container-check', value },
    })
    assert.equal(patch.status, 200, JSON.stringify(patch.body))
    assert.ok((await records(ca, key)).some((r) => r.value === value))

    const stopping = Date.now()
    // podman's default stop timeout (10 s): a server still running then gets SIGKILL and exits 137.
    await podman.run(['stop', 'hostapi-1'], 60_000)
    const stopSeconds = (Date.now() - stopping) / 1000
    console.log(`container image: stopped ${stopSeconds.toFixed(1)} s after SIGTERM`)
    const exit = (await podman.run(['inspect', '--format', '{{.State.ExitCode}}', 'hostapi-1'])).stdout.trim()
    assert.equal(exit, '0', 'the server handled SIGTERM and exited 0 (137 is a SIGKILL after the stop timeout)')
    assert.match((await podman.run(['logs', 'hostapi-1'])).stdout, /"signal":"SIGTERM".*shutting down/)

    // A new container on the same volume: the same demo key (kept in the data directory) and the write.
    await podman.run(['rm', 'hostapi-1'])
    const second = await start('hostapi-2')
    console.log(`container image: healthy ${second.seconds.toFixed(1)} s after podman run (existing volume)`)
    assert.equal(demoKeyIn((await podman.run(['logs', 'hostapi-2'])).stdout), key)
    assert.ok(
      (await records(ca, key)).some((r) => r.type === 'TXT' && r.value === value),
      'the write made before the restart is there',
    )
    await podman.run(['stop', '--time', '30', 'hostapi-2'], 60_000)
  })
})
