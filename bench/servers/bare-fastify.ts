// The reference server of the benchmark: a bare Fastify route over HTTPS on the same certificate,
// answering the same bytes from memory (hostapi's status, headers and body). It shows what the framework and TLS cost on their own.
import fs from 'node:fs'
import Fastify from 'fastify'

const { BENCH_CERT, BENCH_KEY, BENCH_BODY_FILE, BENCH_HEADERS_FILE, BENCH_PORT } = process.env
const body = fs.readFileSync(BENCH_BODY_FILE!, 'utf8')
const headers = BENCH_HEADERS_FILE
  ? (JSON.parse(fs.readFileSync(BENCH_HEADERS_FILE, 'utf8')) as Record<string, string>)
  : {}
const app = Fastify({ https: { cert: fs.readFileSync(BENCH_CERT!), key: fs.readFileSync(BENCH_KEY!) } })
app.all('/*', async (_req, reply) => reply.headers(headers).type('application/json; charset=utf-8').send(body))
await app.listen({ host: '127.0.0.1', port: Number(BENCH_PORT ?? 0) })
const address = app.server.address()
process.stdout.write(`ready ${typeof address === 'object' && address ? address.port : 0}\n`)
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)))
