import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { migrations, releases } from '../src/db/migrations/index.js'
import type { MigrationModule } from '../src/db/migrations/helpers.js'

// Migrations follow expand/contract, so that release N's code runs on release N+1's schema (rolling upgrades, a
// rollback of the code): every migration declares its kind, an expand only adds, and a contract completes an expand
// of an earlier release (N expands, N+1 contracts). Checked over every migration file.
const dir = new URL('../src/db/migrations/', import.meta.url).pathname
const FILE = /^(\d{4}-[a-z0-9-]+)\.ts$/

/** What removes or changes what older code may use: a dropped or renamed table, column, constraint, index, ... */
const REMOVES =
  /\.(drop\w*|rename\w*|alterColumn|modifyColumn)\(|\b(drop|rename)\s+(table|column|constraint|index|function|trigger|view|type|to)\b|\balter\s+column\b/i

/** The file's code outside comments and outside its `down` function (which undoes, so it drops). */
function upCode(source: string): string {
  let s = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '')
  const down = s.indexOf('export async function down')
  if (down >= 0) {
    const end = s.indexOf('\n}\n', down)
    s = s.slice(0, down) + (end >= 0 ? s.slice(end + 3) : '')
  }
  return s
}

/** The text of the call whose opening parenthesis is at `open`. */
function callAt(s: string, open: number): string {
  let depth = 0
  for (let i = open; i < s.length; i++) {
    if (s[i] === '(') depth++
    else if (s[i] === ')' && --depth === 0) return s.slice(open, i + 1)
  }
  return s.slice(open)
}

/** Columns added to an existing table as NOT NULL without a default: the older code's inserts would fail. */
function notNullAdded(code: string): string[] {
  const out: string[] = []
  for (const alter of code.matchAll(/alterTable\(/g)) {
    const end = code.indexOf('.execute()', alter.index)
    const statement = code.slice(alter.index, end < 0 ? undefined : end)
    for (const add of statement.matchAll(/\.addColumn\(/g)) {
      const call = callAt(statement, add.index + '.addColumn'.length)
      if (/notNull\(\)/.test(call) && !/defaultTo\(/.test(call)) out.push(call)
    }
  }
  return out
}

/** The release a migration ships in: the first whose newest migration sorts at or after it, or the next one. */
function releaseOf(name: string, ends: Record<string, string>): string {
  return Object.entries(ends).find(([, end]) => name <= end)?.[0] ?? 'next'
}

/** Every breach of the rules, one line each. */
function migrationProblems(
  list: Record<string, MigrationModule>,
  sources: Record<string, string>,
  ends: Record<string, string>,
): string[] {
  const problems: string[] = []
  const first = Object.keys(ends)[0]
  const order = Object.values(ends)
  order.forEach((end, i) => {
    if (!Object.hasOwn(list, end)) problems.push(`release ${Object.keys(ends)[i]} names ${end}, not a migration`)
    if (i > 0 && end <= order[i - 1]) problems.push(`releases are not in the order of their migrations at ${end}`)
  })
  for (const name of Object.keys(sources))
    if (!Object.hasOwn(list, name)) problems.push(`${name}: a migration file not in the list`)
  for (const [name, m] of Object.entries(list)) {
    if (!Object.hasOwn(sources, name)) problems.push(`${name}: listed, but no file src/db/migrations/${name}.ts`)
    const kind = (m as { kind?: unknown }).kind
    if (kind !== 'expand' && kind !== 'contract') {
      problems.push(`${name}: declares no kind (export const kind = 'expand' or 'contract')`)
      continue
    }
    const code = upCode(sources[name] ?? '')
    if (kind === 'expand') {
      const removes = REMOVES.exec(code)
      if (removes) problems.push(`${name}: an expand that removes or changes (${removes[0]}): make it a contract`)
      for (const call of notNullAdded(code))
        problems.push(`${name}: an expand adds a NOT NULL column without a default ${call}: give it a default`)
      continue
    }
    const contracts = m.kind === 'contract' ? m.contracts : undefined
    if (contracts === undefined) {
      if (releaseOf(name, ends) !== first)
        problems.push(`${name}: a contract must name the expand it completes (export const contracts = '…')`)
      continue
    }
    const target = list[contracts]
    if (!target) problems.push(`${name}: contracts ${contracts}, not a migration`)
    else if (target.kind !== 'expand') problems.push(`${name}: contracts ${contracts}, not an expand`)
    else if (contracts >= name) problems.push(`${name}: contracts ${contracts}, which runs after it`)
    else if (releaseOf(contracts, ends) === releaseOf(name, ends))
      problems.push(
        `${name}: contracts ${contracts} of the same release (${releaseOf(name, ends)}): ship the contract a release later`,
      )
  }
  return problems
}

const sources = Object.fromEntries(
  fs
    .readdirSync(dir)
    .flatMap((f) => {
      const m = FILE.exec(f)
      return m ? [[m[1], fs.readFileSync(path.join(dir, f), 'utf8')]] : []
    })
    .sort(),
)

describe('migrations follow expand/contract', () => {
  it('every migration file declares its kind, and keeps its rules', () => {
    assert.deepEqual(migrationProblems(migrations, sources, releases), [])
  })

  it('finds each breach of the rules', () => {
    const up = async () => undefined
    const file = (body: string) => `export const kind = 'expand'\nexport async function up(db) {\n${body}\n}\n`
    const list: Record<string, MigrationModule> = {
      ...migrations,
      '9001-add': { kind: 'expand', up },
      '9002-drop-too-soon': { kind: 'contract', contracts: '9001-add', up },
      '9003-drops': { kind: 'expand', up },
      '9004-not-null': { kind: 'expand', up },
      '9005-no-expand': { kind: 'contract', up },
      '9006-kindless': { up } as unknown as MigrationModule,
    }
    const files = {
      ...sources,
      '9001-add': file("await db.schema.createTable('x').addColumn('a', 'text', (c) => c.notNull()).execute()"),
      '9002-drop-too-soon': file("await db.schema.dropTable('x').execute()"),
      '9003-drops': file('await sql`alter table x drop column a`.execute(db)'),
      '9004-not-null': file("await db.schema.alterTable('x').addColumn('b', 'text', (c) => c.notNull()).execute()"),
      '9005-no-expand': file("await db.schema.dropTable('x').execute()"),
      '9006-kindless': file(''),
    }
    assert.deepEqual(migrationProblems(list, files, releases), [
      '9002-drop-too-soon: contracts 9001-add of the same release (next): ship the contract a release later',
      '9003-drops: an expand that removes or changes (drop column): make it a contract',
      "9004-not-null: an expand adds a NOT NULL column without a default ('b', 'text', (c) => c.notNull()): give it a default",
      "9005-no-expand: a contract must name the expand it completes (export const contracts = '…')",
      "9006-kindless: declares no kind (export const kind = 'expand' or 'contract')",
    ])
    // Once 9001 shipped, its contract may follow in the next release.
    assert.deepEqual(
      migrationProblems(
        { ...migrations, '9001-add': list['9001-add'], '9002-drop-too-soon': list['9002-drop-too-soon'] },
        { ...sources, '9001-add': files['9001-add'], '9002-drop-too-soon': files['9002-drop-too-soon'] },
        { ...releases, '9.0.0': '9001-add' },
      ),
      [],
    )
  })
})
