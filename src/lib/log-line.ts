const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' }
// Said by the time and level columns, the same on every line, or (`request`, a request line's fields) by the message.
const OMITTED = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'err', 'request'])

/**
 * One pino JSON line as a line for a terminal: local time, level, message, the other fields as `key=value`,
 * and an error's stack indented below. A line that is not JSON is returned as it is.
 */
export function readableLogLine(json: string): string {
  let entry: Record<string, unknown>
  try {
    entry = JSON.parse(json) as Record<string, unknown>
  } catch {
    return json
  }
  const time = typeof entry.time === 'number' ? new Date(entry.time).toTimeString().slice(0, 8) : '--:--:--'
  const level = (LEVELS[entry.level as number] ?? String(entry.level)).padEnd(5)
  const fields = Object.entries(entry)
    .filter(([k]) => !OMITTED.has(k))
    .map(([k, v]) => ` ${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join('')
  let line = `${time} ${level} ${typeof entry.msg === 'string' ? entry.msg : ''}${fields}\n`
  const err = entry.err as { message?: string; stack?: string } | undefined
  const detail = err?.stack ?? err?.message
  if (detail) line += `  ${detail.replace(/\n/g, '\n  ')}\n`
  return line
}

/**
 * What a line of hostapi's output says: the `msg` of a JSON log line (all its output is JSON when stdout is not a
 * terminal, the start's lines too), or the line itself.
 */
export function lineText(line: string): string {
  if (!line.startsWith('{')) return line
  try {
    const msg = (JSON.parse(line) as { msg?: unknown }).msg
    return typeof msg === 'string' ? msg : line
  } catch {
    return line
  }
}
