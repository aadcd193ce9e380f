/**
 * The LLM benchmark's floor for "one more process on the path": a bare node:http reverse proxy to the model
 * server (keep-alive agent, request and response bodies piped as they come, no auth, no validation, no
 * database). What the gateway adds beyond what this adds is the gateway's own cost; what this adds is the price
 * of the extra hop itself (two more socket reads/writes and wake-ups of another process — large on a loaded
 * machine). `TARGET` is the model server's URL. Prints `{"port": n}` once listening.
 */
import http from 'node:http'

const target = new URL(process.env.TARGET)
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })
const server = http.createServer((req, res) => {
  const upstream = http.request(
    { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers, agent },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(res)
    },
  )
  upstream.on('error', () => res.destroy())
  req.pipe(upstream)
})
server.keepAliveTimeout = 65_000
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`))
process.on('SIGTERM', () => server.close(() => process.exit(0)))
