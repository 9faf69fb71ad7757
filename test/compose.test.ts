import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseDocument } from 'yaml'
import { loadConfig } from '../src/config/config.js'
import { KNOWN_SETTINGS } from '../src/config/known-settings.js'

// compose.yaml (the production topology: two instances, PostgreSQL, Redis, PowerDNS) read as Compose reads it, its
// variables filled in, and checked against what hostapi needs: its settings load without a problem or a warning,
// and every name, password, key, port and volume in them points at what the other services are.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const text = fs.readFileSync(path.join(root, 'compose.yaml'), 'utf8')

interface Service {
  image?: string
  build?: { context: string; dockerfile: string }
  environment?: Record<string, string>
  command?: string[]
  ports?: string[]
  volumes?: string[]
  depends_on?: Record<string, { condition: string }>
}
interface Compose {
  services: Record<string, Service>
  volumes: Record<string, unknown>
}

/** The values .env gives the variables the file asks for (docs/container.md). */
const dotEnv: Record<string, string> = {
  POSTGRES_PASSWORD: 'pg-password-1',
  HOSTAPI_SECRET_KEY: Buffer.alloc(32, 7).toString('base64'),
  POWERDNS_API_KEY: 'pdns-api-key-1',
}

/** Compose's interpolation: `${NAME}`, `${NAME:-default}`, `${NAME:?error}` (an error when unset), `$$`. */
function interpolate(value: string, env: Record<string, string>): string {
  return value.replace(/\$\$|\$\{([A-Z0-9_]+)(?:(:-|:\?)([^}]*))?\}/g, (whole, name, op, arg) => {
    if (whole === '$$') return '$'
    const set = env[name]
    if (set) return set
    if (op === ':?') throw new Error(`${name} is required: ${arg}`)
    return op === ':-' ? arg : ''
  })
}

const load = (env: Record<string, string>): Compose => {
  const doc = parseDocument(text, { merge: true })
  assert.deepEqual(doc.errors, [], 'compose.yaml parses')
  const fill = (v: unknown): unknown =>
    typeof v === 'string'
      ? interpolate(v, env)
      : Array.isArray(v)
        ? v.map(fill)
        : v && typeof v === 'object'
          ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fill(x)]))
          : v
  return fill(doc.toJS()) as Compose
}

describe('compose.yaml', () => {
  const compose = load(dotEnv)
  const services = compose.services
  const instances = Object.keys(services).filter((name) => services[name]!.build)

  it('has two hostapi instances built from the Containerfile, PostgreSQL, Redis and PowerDNS', () => {
    assert.deepEqual(Object.keys(services).sort(), ['hostapi-1', 'hostapi-2', 'postgres', 'powerdns', 'redis'])
    assert.deepEqual(instances, ['hostapi-1', 'hostapi-2'])
    for (const name of instances) {
      assert.equal(services[name]!.build!.dockerfile, 'Containerfile')
      assert.ok(fs.existsSync(path.join(root, services[name]!.build!.context, 'Containerfile')))
    }
  })

  it('refers only to services and volumes it defines, and publishes each host port once', () => {
    const hostPorts: string[] = []
    for (const [name, s] of Object.entries(services)) {
      for (const dep of Object.keys(s.depends_on ?? {})) assert.ok(services[dep], `${name} depends on ${dep}`)
      for (const v of s.volumes ?? []) {
        const source = v.split(':')[0]!
        if (!source.startsWith('.') && !source.startsWith('/'))
          assert.ok(source in compose.volumes, `${name} mounts the volume ${source}`)
      }
      for (const p of s.ports ?? [])
        hostPorts.push(p.split(':').slice(0, -1).join(':') + (p.endsWith('/udp') ? '/udp' : ''))
    }
    assert.equal(new Set(hostPorts).size, hostPorts.length, `host ports: ${hostPorts.join(', ')}`)
    for (const volume of Object.keys(compose.volumes))
      assert.ok(
        Object.values(services).some((s) => s.volumes?.some((v) => v.startsWith(`${volume}:`))),
        `${volume} is used`,
      )
  })

  it('gives each instance settings hostapi knows and loads without a problem or a warning', () => {
    for (const name of instances) {
      const env = services[name]!.environment!
      for (const key of Object.keys(env)) assert.ok(KNOWN_SETTINGS.includes(key), `${name}: ${key} is a setting`)
      const config = loadConfig(env)
      assert.deepEqual(config.warnings, [], name)
      assert.equal(config.database.dialect, 'postgres')
      assert.equal(config.redisUrl !== null, true)
      assert.equal(config.demo.enabled, false, 'no demo account in production')
      assert.equal(config.host, '0.0.0.0', 'listens on the container network')
      assert.equal(config.dnsDriver.driver, 'powerdns')
      assert.ok(config.tls.certFile && config.tls.keyFile, 'serves the mounted certificate')
      // The published port is the one it listens on, and its data directory is a volume of its own.
      assert.ok(services[name]!.ports!.every((p) => p.endsWith(`:${config.port}`)))
      const data = services[name]!.volumes!.find((v) => v.split(':')[1] === config.dataDir)
      assert.ok(data, `${name} keeps ${config.dataDir} in a volume`)
      const certDir = path.dirname(config.tls.certFile)
      assert.ok(services[name]!.volumes!.some((v) => v.split(':')[1] === certDir && v.endsWith(':ro')))
    }
    const [a, b] = instances.map((name) => services[name]!)
    assert.deepEqual(a!.environment, b!.environment, 'both instances share every setting (the secret key too)')
    const volumeOf = (s: Service) => s.volumes!.find((v) => v.endsWith(':/data'))!.split(':')[0]
    assert.notEqual(volumeOf(a!), volumeOf(b!), 'each instance has its own data volume')
  })

  it('points the instances at the PostgreSQL, Redis and PowerDNS it runs, with their passwords and key', () => {
    const env = services['hostapi-1']!.environment!
    const db = new URL(env.DATABASE_URL!)
    const pg = services.postgres!.environment!
    assert.equal(db.hostname, 'postgres')
    assert.equal(db.port, '5432')
    assert.equal(decodeURIComponent(db.username), pg.POSTGRES_USER)
    assert.equal(decodeURIComponent(db.password), pg.POSTGRES_PASSWORD)
    assert.equal(db.pathname, `/${pg.POSTGRES_DB}`)
    assert.equal(db.password, dotEnv.POSTGRES_PASSWORD)
    assert.equal(new URL(env.REDIS_URL!).hostname, 'redis')

    const pdns = Object.fromEntries(
      services.powerdns!.command!.map((arg) => arg.replace(/^--/, '').split(/=(.*)/s, 2) as [string, string]),
    )
    const api = new URL(env.HOSTAPI_POWERDNS_URL!)
    assert.equal(api.hostname, 'powerdns')
    assert.equal(api.port, pdns['webserver-port'])
    assert.equal(pdns.api, 'yes')
    assert.equal(pdns.webserver, 'yes')
    assert.equal(env.HOSTAPI_POWERDNS_API_KEY, pdns['api-key'])
    assert.equal(pdns['api-key'], dotEnv.POWERDNS_API_KEY)
    assert.equal(pdns.launch, 'gsqlite3')
    assert.ok(services.powerdns!.volumes!.some((v) => v.endsWith(`:${path.dirname(pdns['gsqlite3-database']!)}`)))
    assert.ok(
      !services.powerdns!.ports!.some((p) => p.includes(pdns['webserver-port']!)),
      "PowerDNS's API stays inside",
    )
  })

  it('asks for each secret it needs, and docs/container.md names them', () => {
    const docs = fs.readFileSync(path.join(root, 'docs', 'container.md'), 'utf8')
    for (const name of Object.keys(dotEnv)) {
      const without = { ...dotEnv }
      delete without[name]
      assert.throws(() => load(without), new RegExp(`${name} is required`))
      assert.ok(docs.includes(name), `docs/container.md names ${name}`)
    }
  })
})
