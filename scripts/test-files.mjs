// The test files `npm test` runs concurrently, the slowest first: the files named in test/slowest-files.txt (from the
// times scripts/test-times.mjs prints at the end of a run), in that order, then every other *.test.ts under src and
// test by name. Started last, one long file would run alone at the end while the other slot idles. The event-loop
// bound suite (test/stall.test.ts) runs on its own afterwards and is left out.
import fs from 'node:fs'
import path from 'node:path'

const all = []
const walk = (dir) => {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name)
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules') walk(p)
    } else if (entry.name.endsWith('.test.ts') && p !== path.join('test', 'stall.test.ts')) all.push(p)
  }
}
walk('src')
walk('test')
all.sort()
const listed = fs.existsSync('test/slowest-files.txt')
  ? fs
      .readFileSync('test/slowest-files.txt', 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#') && all.includes(l))
  : []
process.stdout.write([...listed, ...all.filter((f) => !listed.includes(f))].join('\n'))
