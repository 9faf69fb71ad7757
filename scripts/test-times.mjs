// A test reporter: each test file's time (the sum of its top-level tests, hooks included, counted under the file that
// defines them), the slowest first, printed when the run ends. `npm test` uses it beside the spec reporter.
export default async function* fileTimes(source) {
  const times = new Map()
  for await (const event of source) {
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0 && event.data.file) {
      const file = event.data.file.replace(`${process.cwd()}/`, '')
      times.set(file, (times.get(file) ?? 0) + (event.data.details?.duration_ms ?? 0))
    }
  }
  const slowest = [...times].sort((a, b) => b[1] - a[1])
  yield `\nslowest test files (s):\n${slowest
    .slice(0, 30)
    .map(([file, ms]) => `${(ms / 1000).toFixed(1).padStart(7)}  ${file}`)
    .join('\n')}\n`
}
