// The floor of a read that goes to PostgreSQL: a bare node:https server on the same certificate that, for every
// request, reads hostapi's answer for the scenario from a one-row table with one named prepared statement (a pool
// of 10 connections, as hostapi's) and sends it with hostapi's headers — no framework, no routing, no building of
// the text by the database. No server that reads the database once per request can answer faster on this machine.
import fs from 'node:fs'
import https from 'node:https'
import pg from 'pg'

const { BENCH_CERT, BENCH_KEY, BENCH_HEADERS_FILE, BENCH_PORT, BENCH_PG_URL, BENCH_PG_SCHEMA, BENCH_ANSWER_ID } =
  process.env
const headers = JSON.parse(fs.readFileSync(BENCH_HEADERS_FILE!, 'utf8')) as Record<string, string>
const pool = new pg.Pool({
  connectionString: BENCH_PG_URL,
  max: 10,
  ...(BENCH_PG_SCHEMA ? { options: `-c search_path=${BENCH_PG_SCHEMA}` } : {}),
})
// A connection lost while idle is dropped from the pool (without a listener its error would end the process).
pool.on('error', () => undefined)
const query = { name: 'bench_answer', text: 'select body from bench_answers where id = $1', values: [BENCH_ANSWER_ID] }
const server = https.createServer(
  { cert: fs.readFileSync(BENCH_CERT!), key: fs.readFileSync(BENCH_KEY!) },
  (req, res) => {
    req.resume()
    req.on('end', () => {
      pool.query<{ body: string }>(query).then(
        ({ rows }) => {
          const body = Buffer.from(rows[0].body)
          res.writeHead(200, { ...headers, 'content-length': String(body.length) })
          res.end(body)
        },
        () => {
          res.writeHead(503)
          res.end()
        },
      )
    })
  },
)
server.keepAliveTimeout = 72_000
server.listen(Number(BENCH_PORT ?? 0), '127.0.0.1', () => {
  const address = server.address()
  process.stdout.write(`ready ${typeof address === 'object' && address ? address.port : 0}\n`)
})
process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))))
