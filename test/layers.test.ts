import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { sourceFiles } from './helpers/source-files.js'

// The tree is built in one-way layers: lib <- db/ops <- drivers/modules/jobs <- http <- app/server/cli.
// An import may point to its own layer or a lower one, never to a higher one. A module's routes and request/reply
// schemas (*.routes.ts, *.schemas.ts) are its HTTP face and belong to the http layer; its services, rules and
// repositories may not import them. An area's route list (area.routes.ts) is one of them; the factory of its services
// (services.ts) is a module's own code and imports no route.
const root = new URL('..', import.meta.url).pathname
const src = path.join(root, 'src')

const LAYER_NAMES = ['lib', 'db/ops', 'drivers/modules', 'http', 'top'] as const

/** The layer of a file, by its path relative to src/. */
export function layerOf(rel: string): number {
  const p = rel.split(path.sep).join('/')
  const base = p.slice(p.lastIndexOf('/') + 1)
  // Used everywhere and free of upward imports: the lowest layer. The configuration is pure (environment in, object out).
  if (p.startsWith('lib/') || p.startsWith('config/') || ['errors.ts', 'clock.ts', 'lazy-require.ts'].includes(p))
    return 0
  // The row types of a module's tables sit beside the module but describe the database. Operating state (metrics,
  // fault injection, the request journal) is used by the HTTP plugins and the admin routes alike.
  if (p.startsWith('db/') || p.startsWith('ops/') || base.endsWith('.tables.ts')) return 1
  // The demo data of a module is loaded by the seeder of the composition root.
  if (base.endsWith('.seed.ts')) return 4
  // A module's HTTP face.
  if (p.startsWith('modules/') && /\.routes\.ts$|\.schemas\.ts$/.test(base)) return 3
  if (p.startsWith('drivers/') || p.startsWith('modules/') || p.startsWith('jobs/')) return 2
  if (p.startsWith('http/')) return 3
  // The composition root: app, server, CLI, context, seeding, data directory, secret key, TLS.
  return 4
}

const SPECIFIER =
  /(?:\bimport|\bexport)\s[^'"]*?\bfrom\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)|\bimport\s+['"]([^'"]+)['"]/g

/** Every relative import of a file, resolved to a path relative to src/ (or outside it). */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8')
  const out: string[] = []
  for (const m of text.matchAll(SPECIFIER)) {
    const spec = m[1] ?? m[2] ?? m[3]
    if (spec === undefined || !spec.startsWith('.')) continue
    const target = path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts'))
    out.push(path.relative(src, target))
  }
  return out
}

/** The strongly connected components of more than one file (Tarjan): each is a set of files importing each other. */
function stronglyConnected(graph: Map<string, string[]>): string[][] {
  let next = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const out: string[][] = []
  const visit = (v: string) => {
    index.set(v, next)
    low.set(v, next)
    next++
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0))
    }
    if (low.get(v) !== index.get(v)) return
    const component: string[] = []
    for (let w = stack.pop(); w !== undefined; w = stack.pop()) {
      onStack.delete(w)
      component.push(w)
      if (w === v) break
    }
    if (component.length > 1) out.push(component)
  }
  for (const v of graph.keys()) if (!index.has(v)) visit(v)
  return out
}

/** Every `*.tables.ts` under src/, and src/db/tables.ts: the files that declare the database's tables. */
function tablesFiles(): string[] {
  return sourceFiles(src).filter(
    (f) => f.endsWith('.tables.ts') || path.relative(src, f) === path.join('db', 'tables.ts'),
  )
}

/**
 * Each table of the schema and its owner: the driver folder (`drivers/<kind>`) that declares it, or `application` for
 * the tables declared elsewhere (src/db/tables.ts, the modules' *.tables.ts). A table is a member of an exported
 * `…Tables` interface whose type is a `…Table` interface.
 */
export function tableOwners(duplicates: string[] = []): Map<string, string> {
  const owners = new Map<string, string>()
  for (const file of tablesFiles()) {
    const rel = path.relative(src, file).split(path.sep).join('/')
    const owner = rel.startsWith('drivers/') ? rel.split('/').slice(0, 2).join('/') : 'application'
    const text = fs.readFileSync(file, 'utf8')
    for (const block of text.matchAll(/export interface \w+Tables\b[^{]*\{([^}]*)\}/g))
      for (const member of (block[1] ?? '').matchAll(/^\s*(\w+)\s*:\s*\w+Table\b/gm))
        if (member[1] !== undefined) {
          const earlier = owners.get(member[1])
          if (earlier !== undefined && earlier !== owner) duplicates.push(`${member[1]}: ${earlier}, ${owner}`)
          owners.set(member[1], owner)
        }
  }
  return owners
}

// A Kysely call that names tables in its first argument (a string, or an array of them), and the sql`` templates.
const KYSELY_TABLE_CALL =
  /\.(?:selectFrom|insertInto|updateTable|deleteFrom|replaceInto|mergeInto|innerJoin|leftJoin|rightJoin|fullJoin|crossJoin|using|table|createTable|dropTable|alterTable)\(\s*(\[[^\]]*\]|'[^']*'|"[^"]*"|`[^`]*`)/g
const SQL_TEMPLATE = /\bsql\s*(?:<[^>`]*>)?\s*`([^`]*)`/g

/** The table names a file names in Kysely calls, in sql`` text and in `sql.table`/`sql.ref`/`sql.id` arguments. */
export function tablesNamedIn(text: string, tables: Iterable<string>): string[] {
  const found = new Set<string>()
  const known = [...tables]
  for (const m of text.matchAll(KYSELY_TABLE_CALL))
    for (const q of (m[1] ?? '').matchAll(/['"`]\s*(\w+)/g)) if (q[1] && known.includes(q[1])) found.add(q[1])
  for (const m of text.matchAll(/\bsql\.(?:table|ref|id)\(\s*['"`](\w+)/g))
    if (m[1] && known.includes(m[1])) found.add(m[1])
  for (const m of text.matchAll(SQL_TEMPLATE))
    for (const t of known) if (new RegExp(`\\b${t}\\b`).test(m[1] ?? '')) found.add(t)
  return [...found].sort()
}

// SQL: a Kysely query builder started, or an sql`` template (or sql.raw/sql.table… fragment).
const SQL_USE =
  /\.(?:selectFrom|insertInto|updateTable|deleteFrom|with|withRecursive|replaceInto|mergeInto)\(|\bsql\s*(?:<[^>`]*>)?\s*`|\bsql\.\w+\(/

/** The files ARCHITECTURE.md names in its table of SQL outside repositories (section "SQL outside repositories"). */
export function sqlExceptions(): Map<string, string> {
  const doc = fs.readFileSync(path.join(root, 'ARCHITECTURE.md'), 'utf8')
  const section = doc.split(/^## /m).find((s) => s.startsWith('SQL outside repositories'))
  assert.ok(section, 'ARCHITECTURE.md has a section "SQL outside repositories"')
  const out = new Map<string, string>()
  for (const m of section.matchAll(/^\|\s*`src\/([^`]+)`\s*\|\s*(.*?)\s*\|\s*$/gm))
    if (m[1] !== undefined) out.set(m[1], m[2] ?? '')
  return out
}

/** Upward imports not yet removed; each one is a debt, and the list only shrinks. */
const EXCEPTIONS: string[] = []

describe('layers', () => {
  it("reads a request's route options only through routeOf (Fastify builds them anew at every read)", () => {
    const readers = sourceFiles(src)
      .filter((file) => !file.endsWith('.test.ts') && /\.routeOptions\b/.test(fs.readFileSync(file, 'utf8')))
      .map((file) => path.relative(src, file).split(path.sep).join('/'))
    assert.deepEqual(readers, ['http/route-hooks.ts'])
  })

  it('no file under src/ imports from a higher layer', () => {
    const violations: string[] = []
    for (const file of sourceFiles(src)) {
      const rel = path.relative(src, file)
      const from = layerOf(rel)
      for (const target of importsOf(file)) {
        if (target.startsWith('..')) continue
        const to = layerOf(target)
        if (to > from) violations.push(`${rel} (${LAYER_NAMES[from]}) -> ${target} (${LAYER_NAMES[to]})`)
      }
    }
    if (process.env.LAYERS_LIST) console.log(violations.sort().join('\n'))
    assert.deepEqual(violations.sort(), [...EXCEPTIONS].sort())
  })

  it('no import cycle under src/, type-only imports included', () => {
    const graph = new Map<string, string[]>()
    for (const file of sourceFiles(src)) {
      const rel = path.relative(src, file)
      graph.set(rel, [...new Set(importsOf(file).filter((t) => !t.startsWith('..')))])
    }
    const cycles = stronglyConnected(graph).map((c) => c.sort().join(' <-> '))
    assert.deepEqual(cycles.sort(), [])
  })

  it('a driver names only its own tables, and holds no handle typed to the whole schema', () => {
    const duplicates: string[] = []
    const owners = tableOwners(duplicates)
    // A driver's tables file that declared an application table again would make it the driver's own.
    assert.deepEqual(duplicates, [], 'a table is declared by two owners')
    assert.ok(owners.get('domains') === 'application' && owners.get('registry_domains') === 'drivers/registry')
    const violations: string[] = []
    for (const file of sourceFiles(path.join(src, 'drivers'))) {
      const rel = path.relative(src, file).split(path.sep).join('/')
      const own = rel.split('/').slice(0, 2).join('/')
      for (const table of tablesNamedIn(fs.readFileSync(file, 'utf8'), owners.keys()))
        if (owners.get(table) !== own) violations.push(`${rel} names ${table} (${owners.get(table)})`)
      // `DB` and `Db` type a handle with every table of the schema in it.
      for (const target of importsOf(file))
        if (['db/tables.ts', 'db/database.ts'].includes(target.split(path.sep).join('/')))
          violations.push(`${rel} imports ${target}`)
    }
    assert.deepEqual(violations.sort(), [])
  })

  it('the table check sees tables in Kysely calls and sql text', () => {
    const tables = ['domains', 'registry_domains', 'jobs']
    assert.deepEqual(tablesNamedIn("db.selectFrom('domains').select('id')", tables), ['domains'])
    assert.deepEqual(tablesNamedIn("db.selectFrom(['registry_domains as r', 'domains'])", tables), [
      'domains',
      'registry_domains',
    ])
    assert.deepEqual(tablesNamedIn("db\n  .innerJoin('jobs', 'jobs.id', 'x.job_id')", tables), ['jobs'])
    assert.deepEqual(tablesNamedIn('sql`select 1 from domains d`.execute(db)', tables), ['domains'])
    assert.deepEqual(tablesNamedIn("sql.table('jobs')", tables), ['jobs'])
    assert.deepEqual(tablesNamedIn("db.selectFrom('registry_domains').where('name', '=', 'domains')", tables), [
      'registry_domains',
    ])
  })

  it('SQL only in repositories, migrations and the files ARCHITECTURE.md names with a reason', () => {
    const exceptions = sqlExceptions()
    const withSql = sourceFiles(src)
      .map((file) => path.relative(src, file).split(path.sep).join('/'))
      .filter((rel) => !rel.endsWith('.repository.ts') && !rel.startsWith('db/migrations/'))
      .filter((rel) => SQL_USE.test(fs.readFileSync(path.join(src, rel), 'utf8')))
    const unnamed = withSql.filter((rel) => !exceptions.has(rel))
    assert.deepEqual(
      unnamed,
      [],
      'SQL outside a repository: move it, or name the file and the reason in ARCHITECTURE.md',
    )
    const stale = [...exceptions.keys()].filter((rel) => !withSql.includes(rel))
    assert.deepEqual(stale, [], 'ARCHITECTURE.md names files without SQL: remove them from the list')
    for (const [rel, reason] of exceptions) assert.ok(reason.length > 10, `${rel} has a reason`)
  })

  it('no repository and no job file imports a service (shared types and constants live in *.types.ts)', () => {
    const violations: string[] = []
    for (const file of sourceFiles(src)) {
      const rel = path.relative(src, file).split(path.sep).join('/')
      if (!rel.endsWith('.repository.ts') && !rel.startsWith('jobs/')) continue
      for (const target of importsOf(file)) if (target.endsWith('.service.ts')) violations.push(`${rel} -> ${target}`)
    }
    assert.deepEqual(violations.sort(), [])
  })

  it('no file that builds services reaches a *.routes.ts module, directly or through other imports', () => {
    const graph = new Map<string, string[]>()
    for (const file of sourceFiles(src)) {
      const rel = path.relative(src, file)
      graph.set(rel, [...new Set(importsOf(file).filter((t) => !t.startsWith('..')))])
    }
    // The composition root's context and every factory of services: building them is one step, the routes another.
    const builders = [...graph.keys()].filter(
      (rel) => rel === 'context.ts' || rel === 'services.ts' || /^modules\/.*\bservices\.ts$/.test(rel),
    )
    assert.ok(builders.includes('context.ts'), 'context.ts is among the files checked')
    const reached: string[] = []
    for (const builder of builders) {
      const seen = new Set<string>([builder])
      const path_ = new Map<string, string>([[builder, builder]])
      const queue = [builder]
      for (let at = queue.shift(); at !== undefined; at = queue.shift()) {
        for (const next of graph.get(at) ?? []) {
          if (seen.has(next)) continue
          seen.add(next)
          path_.set(next, `${path_.get(at)} -> ${next}`)
          if (next.endsWith('.routes.ts')) reached.push(path_.get(next) ?? next)
          else queue.push(next)
        }
      }
    }
    assert.deepEqual(reached, [])
  })

  it('every service class takes one deps object, its dependencies by name', () => {
    const positional: string[] = []
    let classes = 0
    for (const file of sourceFiles(path.join(src, 'modules'))) {
      const text = fs.readFileSync(file, 'utf8')
      for (const m of text.matchAll(/^export class (\w+Service)\b[^{]*\{/gm)) {
        classes++
        const ctor = /\n {2}constructor\(([^)]*)\)/.exec(text.slice(m.index))
        if (!ctor || !new RegExp(`^(private readonly )?deps: ${m[1]}Deps$`).test(ctor[1] ?? ''))
          positional.push(`${path.relative(src, file)}: ${m[1]}(${ctor?.[1]?.replace(/\s+/g, ' ').trim() ?? ''})`)
      }
    }
    assert.ok(classes > 20, `${classes} service classes found`)
    assert.deepEqual(positional, [])
  })

  it('no deps object takes a dependency as a getter (a lazy closure that hides a cycle)', () => {
    const getters: string[] = []
    for (const file of sourceFiles(src)) {
      const text = fs.readFileSync(file, 'utf8')
      for (const m of text.matchAll(/^export interface (\w+Deps) \{\n([\s\S]*?)^\}/gm))
        for (const line of (m[2] ?? '').split('\n'))
          if (/^ {2}\w+\??: \(\) =>/.test(line)) getters.push(`${path.relative(src, file)}: ${m[1]}.${line.trim()}`)
    }
    assert.deepEqual(getters, [])
  })

  it('no file under src/ is longer than 450 lines', () => {
    const long = sourceFiles(src)
      .map((file) => ({ file: path.relative(src, file), lines: fs.readFileSync(file, 'utf8').split('\n').length - 1 }))
      .filter((f) => f.lines > 450)
    assert.deepEqual(long, [])
  })

  // Test files split by subject, shared setup in test/helpers. Still over the cap, to be split: FAR_OVER.
  const FAR_OVER = ['fault-suite.test.ts']
  it('no file under test/ is longer than 450 lines', () => {
    const testDir = path.join(root, 'test')
    const files = (dir: string): string[] =>
      fs
        .readdirSync(dir, { withFileTypes: true })
        .flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : [path.join(dir, e.name)]))
        .filter((file) => file.endsWith('.ts'))
    const long = files(testDir)
      .map((file) => ({
        file: path.relative(testDir, file),
        lines: fs.readFileSync(file, 'utf8').split('\n').length - 1,
      }))
      .filter((f) => f.lines > 450 && !FAR_OVER.includes(f.file))
    assert.deepEqual(long, [])
  })
})
