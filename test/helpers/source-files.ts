import fs from 'node:fs'
import path from 'node:path'

/** The TypeScript sources under `dir`, tests and declaration files left out: what the rules over src/ read. */
export function sourceFiles(dir: string): string[] {
  const out: string[] = []
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) out.push(...sourceFiles(full))
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') && !entry.name.endsWith('.test.ts'))
      out.push(full)
  }
  return out
}
