/**
 * The pipeline benchmark's baseline: bare Express 5 on the same Node, answering every request with a JSON body
 * of BODY_BYTES bytes (the size of the gateway's `GET /agents` body). Prints `{"port": n}` once listening.
 * Plain JavaScript so it runs under `node` exactly as the compiled gateway does (no loader).
 */
import express from 'express'

const bytes = Number(process.env.BODY_BYTES ?? 300)
const filler = 'x'.repeat(Math.max(0, bytes - '{"items":[],"pad":""}'.length))
const app = express()
app.disable('x-powered-by')
app.use((_req, res) => {
  res.json({ items: [], pad: filler })
})
const server = app.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`)
})
server.keepAliveTimeout = 65_000
process.on('SIGTERM', () => server.close(() => process.exit(0)))
