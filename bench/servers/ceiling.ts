// The ceiling of the benchmark: a bare node:https server on the same certificate answering the same
// bytes from memory (hostapi's status, headers and body for the scenario) — no framework, no routing, no database.
import fs from 'node:fs'
import https from 'node:https'

const { BENCH_CERT, BENCH_KEY, BENCH_BODY_FILE, BENCH_HEADERS_FILE, BENCH_PORT } = process.env
const body = fs.readFileSync(BENCH_BODY_FILE!)
const headers = {
  ...(BENCH_HEADERS_FILE
    ? (JSON.parse(fs.readFileSync(BENCH_HEADERS_FILE, 'utf8')) as Record<string, string>)
    : { 'content-type': 'application/json; charset=utf-8' }),
  'content-length': String(body.length),
}
const server = https.createServer(
  { cert: fs.readFileSync(BENCH_CERT!), key: fs.readFileSync(BENCH_KEY!) },
  (req, res) => {
    req.resume()
    req.on('end', () => {
      res.writeHead(200, headers)
      res.end(body)
    })
  },
)
server.keepAliveTimeout = 72_000
server.listen(Number(BENCH_PORT ?? 0), '127.0.0.1', () => {
  const address = server.address()
  process.stdout.write(`ready ${typeof address === 'object' && address ? address.port : 0}\n`)
})
process.on('SIGTERM', () => server.close(() => process.exit(0)))
