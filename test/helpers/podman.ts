import { execFile, execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

/** Why the container tests cannot run here, or null: rootful podman with runc, a static busybox and tar. */
export function podmanMissing(): string | null {
  const has = (cmd: string) => {
    try {
      execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' })
      return true
    } catch {
      return false
    }
  }
  for (const cmd of ['podman', 'runc', 'slirp4netns', 'tar'])
    if (!has(cmd)) return `${cmd} is not installed (.ci/run installs it)`
  if (!fs.existsSync('/bin/busybox')) return '/bin/busybox is not installed (busybox-static)'
  if (process.getuid?.() !== 0) return 'podman runs rootful here: the test needs root'
  return null
}

export interface Podman {
  /** Runs `podman <args>` on this test's own storage; rejects when it exits non-zero. */
  run(args: string[], timeoutMs?: number): Promise<{ stdout: string; stderr: string }>
  /** The `--ulimit` flags a container gets (see startPodman). */
  limits: string[]
  /** A directory of this test's, removed by close(). */
  dir: string
  /** Removes the containers, volumes and images this podman made, and its storage. */
  close(): Promise<void>
}

/** The hard limit `name` of /proc/self/limits ("Max open files"), or null when unlimited or unknown. */
function hardLimit(name: string): number | null {
  const line = fs
    .readFileSync('/proc/self/limits', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(name))
  const hard = line?.slice(26).trim().split(/\s+/)[1]
  return hard && /^\d+$/.test(hard) ? Number(hard) : null
}

/**
 * A podman of the test's own: storage, run state, temporary files and network configuration in a temporary
 * directory (no image, container, volume or network of the machine is seen or touched), runc as the runtime
 * (crun refuses the cgroup layout of these machines), no systemd. Rootful podman gives a container 1048576 open
 * files and 4194304 processes unless told otherwise, which runc cannot set where the test's own limits are lower;
 * its containers get the test's open-file limit and 4096 processes instead.
 */
export async function startPodman(): Promise<Podman> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostapi-podman-'))
  const sub = (name: string) => {
    const p = path.join(dir, name)
    fs.mkdirSync(p, { mode: 0o700 })
    return p
  }
  const global = [
    '--root',
    sub('root'),
    '--runroot',
    sub('run'),
    '--tmpdir',
    sub('tmp'),
    '--network-config-dir',
    sub('networks'),
    '--runtime',
    'runc',
    '--cgroup-manager',
    'cgroupfs',
    '--events-backend',
    'file',
    '--log-level',
    'error',
  ]
  const podman = (args: string[], timeoutMs = 120_000) =>
    run('podman', [...global, ...args], {
      maxBuffer: 256 * 1024 * 1024,
      timeout: timeoutMs,
      env: { ...process.env, TMPDIR: path.join(dir, 'tmp') },
    })
  const nofile = Math.min(hardLimit('Max open files') ?? 65536, 65536)
  return {
    run: podman,
    limits: ['--ulimit', `nofile=${nofile}:${nofile}`, '--ulimit', 'nproc=4096:4096'],
    dir,
    async close() {
      const quiet = (args: string[]) => podman(args).catch(() => undefined)
      await quiet(['rm', '--all', '--force', '--time', '0'])
      await quiet(['volume', 'rm', '--all', '--force'])
      await quiet(['rmi', '--all', '--force'])
      // Storage keeps a private mount of its own directory: undone before the directory goes.
      const mounts = fs
        .readFileSync('/proc/self/mountinfo', 'utf8')
        .split('\n')
        .map((l) => l.split(' ')[4])
        .filter((m): m is string => m?.startsWith(`${dir}/`) ?? false)
        .sort((a, b) => b.length - a.length)
      for (const m of mounts) await run('umount', ['-l', m]).catch(() => undefined)
      fs.rmSync(dir, { recursive: true, force: true })
    },
  }
}

/**
 * Imports a base image for the Containerfile where no registry is reachable: this machine's own node binary and
 * the libraries it loads (ldd), its npm, a static busybox as the shell and tools, /etc/passwd and /etc/group with
 * the `node` user (uid 1000) of the official Node images, and /tmp. What the official image adds (Debian's other
 * packages, yarn) the Containerfile does not use.
 */
export async function importNodeBase(podman: Podman, name: string): Promise<void> {
  const rootfs = path.join(podman.dir, 'rootfs')
  const put = (p: string) => path.join(rootfs, p)
  for (const d of ['bin', 'etc', 'tmp', 'root', 'home/node', 'usr/bin', 'usr/lib'])
    fs.mkdirSync(put(d), { recursive: true })
  const node = fs.realpathSync(process.execPath)
  fs.copyFileSync(node, put('usr/bin/node'))
  fs.chmodSync(put('usr/bin/node'), 0o755)
  const { stdout } = await run('ldd', [node])
  for (const lib of stdout.match(/\/\S+/g) ?? []) {
    fs.mkdirSync(path.dirname(put(lib)), { recursive: true })
    fs.copyFileSync(fs.realpathSync(lib), put(lib))
  }
  const npm = path.resolve(path.dirname(node), '..', 'lib', 'node_modules', 'npm')
  fs.cpSync(npm, put('usr/lib/node_modules/npm'), { recursive: true })
  fs.symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', put('usr/bin/npm'))
  fs.copyFileSync('/bin/busybox', put('bin/busybox'))
  fs.chmodSync(put('bin/busybox'), 0o755)
  const tools = (await run('/bin/busybox', ['--list'])).stdout.split('\n').filter(Boolean)
  for (const tool of tools) if (!fs.existsSync(put(`bin/${tool}`))) fs.symlinkSync('busybox', put(`bin/${tool}`))
  fs.symlinkSync('/bin/env', put('usr/bin/env'))
  fs.writeFileSync(put('etc/passwd'), 'root:x:0:0:root:/root:/bin/sh\nnode:x:1000:1000::/home/node:/bin/sh\n')
  fs.writeFileSync(put('etc/group'), 'root:x:0:\nnode:x:1000:\n')
  fs.chmodSync(put('tmp'), 0o1777)
  fs.chownSync(put('home/node'), 1000, 1000)
  const tar = path.join(podman.dir, 'rootfs.tar')
  await run('tar', ['-C', rootfs, '-cf', tar, '.'])
  fs.rmSync(rootfs, { recursive: true, force: true })
  await podman.run(['import', '--change', 'ENV=PATH=/usr/local/bin:/usr/bin:/bin', tar, name])
  fs.rmSync(tar)
}

/**
 * A build context for `--build-arg DEPS=context`: the checkout's files (tracked and new, as git lists them) and its
 * node_modules, hard-linked where they can be (the context is only read), copied otherwise. Not its dist: a build
 * running beside the test (test/bundle.test.ts) may be rewriting it; the image compiles its own, as a normal build
 * does. The context's .dockerignore keeps node_modules in.
 */
export async function checkoutContext(checkout: string, dest: string): Promise<void> {
  fs.mkdirSync(dest, { recursive: true })
  const { stdout } = await run(
    'git',
    ['-C', checkout, 'ls-files', '-z', '--cached', '--others', '--exclude-standard'],
    {
      maxBuffer: 64 * 1024 * 1024,
    },
  )
  const files = stdout.split('\0').filter((f) => f && fs.existsSync(path.join(checkout, f)))
  const nodeModules = `${fs.realpathSync(path.join(checkout, 'node_modules'))}/.`
  const to = path.join(dest, 'node_modules')
  for (const f of files) {
    fs.mkdirSync(path.dirname(path.join(dest, f)), { recursive: true })
    try {
      fs.linkSync(path.join(checkout, f), path.join(dest, f))
    } catch {
      fs.cpSync(path.join(checkout, f), path.join(dest, f), { preserveTimestamps: true })
    }
  }
  await run('cp', ['-al', nodeModules, to]).catch(() => run('cp', ['-a', nodeModules, to]))
  // Unlinked first: written through a hard link, the checkout's own file would change.
  fs.rmSync(path.join(dest, '.dockerignore'), { force: true })
  fs.writeFileSync(path.join(dest, '.dockerignore'), '.git\n')
}
