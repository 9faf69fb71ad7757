import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import https from 'node:https'
import { spawn, type ChildProcess } from 'node:child_process'
import { describe, it } from 'node:test'
import { freePort } from './dns.js'
import { selfSignedCert } from './smtp.js'
import { eventually } from './wait.js'
import { owned } from './children.js'

const PEBBLE_PATHS = ['/usr/bin/pebble', '/usr/local/bin/pebble']
const CHALLTESTSRV_PATHS = ['/usr/bin/pebble-challtestsrv', '/usr/local/bin/pebble-challtestsrv']
const pebbleBinary = () => PEBBLE_PATHS.find((p) => fs.existsSync(p))
const challTestSrvBinary = () => CHALLTESTSRV_PATHS.find((p) => fs.existsSync(p))

/** describe(name, fn) when pebble (and pebble-challtestsrv, from the same package) can run; else a skipped test. */
export function describeWithPebble(name: string, fn: () => void): void {
  // node:test counts skipped tests in its summary but not skipped suites.
  if (!pebbleBinary()) it(name, { skip: 'pebble not installed' }, () => undefined)
  else if (!challTestSrvBinary()) it(name, { skip: 'pebble-challtestsrv not installed' }, () => undefined)
  else describe(name, fn)
}

/** How a test's pebble is set up. */
export interface PebbleOptions {
  /** The DNS server (on 127.0.0.1) pebble resolves names and reads dns-01 records through. */
  dnsPort: number
  /** The port pebble fetches http-01 files on. */
  httpPort: number
  /** EAB key ids and their base64url HMAC keys; when given, an account needs one. */
  eab?: Record<string, string>
  /** Names pebble refuses to certify. */
  blocked?: string[]
  /** Extra environment (PEBBLE_WFE_NONCEREJECT, …). */
  env?: Record<string, string>
  /** How long the leaves it issues last, in seconds (pebble's own default is five years). */
  validitySeconds?: number
}

/** A pebble of a test on loopback, with its TLS certificate and configuration in a temporary directory. */
export interface Pebble {
  directoryUrl: string
  /** The PEM file that signed pebble's own TLS certificate (HOSTAPI_ACME_CA_BUNDLE). */
  caBundle: string
  /** Pebble's root and intermediate issuing certificates, from its management port. */
  root(): Promise<string>
  intermediate(): Promise<string>
  /** What it has logged so far. */
  log(): string
  /** Stops pebble and starts it again on the same ports: it forgets every account, order and authorization. */
  restart(): Promise<void>
  close(): Promise<void>
}

/** Starts pebble on free loopback ports; resolves once its directory answers. */
export async function startPebble(opts: PebbleOptions): Promise<Pebble> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostapi-pebble-'))
  const { key, cert } = selfSignedCert(dir)
  const [port, managementPort] = [await freePort(), await freePort()]
  const config = {
    pebble: {
      listenAddress: `127.0.0.1:${port}`,
      managementListenAddress: `127.0.0.1:${managementPort}`,
      certificate: cert,
      privateKey: key,
      httpPort: opts.httpPort,
      tlsPort: 5001,
      ocspResponderURL: '',
      externalAccountBindingRequired: !!opts.eab,
      ...(opts.eab ? { externalAccountMACKeys: opts.eab } : {}),
      ...(opts.blocked ? { domainBlocklist: opts.blocked } : {}),
      ...(opts.validitySeconds ? { certificateValidityPeriod: opts.validitySeconds } : {}),
    },
  }
  const configFile = path.join(dir, 'pebble.json')
  fs.writeFileSync(configFile, JSON.stringify(config))
  let output = ''
  const spawnPebble = () => {
    const c: ChildProcess = spawn(pebbleBinary()!, ['-config', configFile, '-dnsserver', `127.0.0.1:${opts.dnsPort}`], {
      env: {
        PATH: process.env.PATH ?? '',
        PEBBLE_VA_NOSLEEP: '1',
        PEBBLE_WFE_NONCEREJECT: '0',
        PEBBLE_AUTHZREUSE: '0',
        ...opts.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    owned(c)
    c.stdout?.on('data', (b: Buffer) => (output += b.toString()))
    c.stderr?.on('data', (b: Buffer) => (output += b.toString()))
    return c
  }
  let child = spawnPebble()
  const ca = fs.readFileSync(cert)
  const get = (url: string) =>
    new Promise<string>((resolve, reject) => {
      https
        .get(url, { ca }, (res) => {
          let body = ''
          res.setEncoding('utf8')
          res.on('data', (c: string) => (body += c))
          res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`${url}: ${res.statusCode}`))))
        })
        .on('error', reject)
    })
  const directoryUrl = `https://127.0.0.1:${port}/dir`
  const ready = () =>
    eventually(() => get(directoryUrl), {
      what: 'pebble answers',
      timeoutMs: 15_000,
      intervalMs: 100,
      failIf: () => child.exitCode !== null && `pebble exited (${child.exitCode})`,
    }).catch((err: Error) => {
      child.kill()
      throw new Error(`pebble did not start: ${err.message}\n${output}`)
    })
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r))
      child.kill()
      await exited
    }
  }
  await ready()
  return {
    directoryUrl,
    caBundle: cert,
    root: () => get(`https://127.0.0.1:${managementPort}/roots/0`),
    intermediate: () => get(`https://127.0.0.1:${managementPort}/intermediates/0`),
    log: () => output,
    async restart() {
      await stop()
      child = spawnPebble()
      await ready()
    },
    async close() {
      await stop()
      fs.rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** pebble-challtestsrv on loopback: a DNS server whose TXT records a test sets over its management API. */
export interface ChallTestSrv {
  /** The UDP and TCP port of its DNS server (pebble's -dnsserver). */
  dnsPort: number
  /** Adds `value` to the TXT records at `fqdn` (values at one name accumulate). */
  addTxt(fqdn: string, value: string): Promise<void>
  /** Removes every TXT record at `fqdn`. */
  clearTxt(fqdn: string): Promise<void>
  close(): Promise<void>
}

/** Starts pebble-challtestsrv with only its DNS server (A queries answer 127.0.0.1); resolves once it answers. */
export async function startChallTestSrv(): Promise<ChallTestSrv> {
  const [dnsPort, managementPort] = [await freePort(), await freePort()]
  let output = ''
  const child = spawn(
    challTestSrvBinary()!,
    [
      ...['-dns01', `127.0.0.1:${dnsPort}`, '-management', `127.0.0.1:${managementPort}`],
      ...['-http01', '', '-https01', '', '-tlsalpn01', ''],
    ],
    { env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] },
  )
  owned(child)
  child.stdout?.on('data', (b: Buffer) => (output += b.toString()))
  child.stderr?.on('data', (b: Buffer) => (output += b.toString()))
  const post = async (path: string, body: unknown) => {
    const r = await fetch(`http://127.0.0.1:${managementPort}${path}`, { method: 'POST', body: JSON.stringify(body) })
    if (!r.ok) throw new Error(`pebble-challtestsrv ${path}: ${r.status} ${await r.text()}`)
  }
  await eventually(() => post('/clear-txt', { host: 'ready.test.' }), {
    what: 'pebble-challtestsrv answers',
    timeoutMs: 15_000,
    intervalMs: 100,
    failIf: () => child.exitCode !== null && `pebble-challtestsrv exited (${child.exitCode})`,
  }).catch((err: Error) => {
    child.kill()
    throw new Error(`pebble-challtestsrv did not start: ${err.message}\n${output}`)
  })
  return {
    dnsPort,
    addTxt: (fqdn, value) => post('/set-txt', { host: `${fqdn}.`, value }),
    clearTxt: (fqdn) => post('/clear-txt', { host: `${fqdn}.` }),
    async close() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r))
        child.kill()
        await exited
      }
    },
  }
}
