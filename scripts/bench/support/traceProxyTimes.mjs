/**
 * `npm run bench -- llm -- --trace`: loaded with `--import` into the gateway and the bare proxy, it times each
 * proxied call from node:http's own diagnostics channels (no code of theirs changed) and writes the times to
 * `TRACE_FILE` when the process exits. Per call whose path ends with `TRACE_PATH` (default `/v1/messages`),
 * epoch milliseconds of:
 *   arrival   node:http parsed the request's headers (`http.server.request.start`)
 *   sent      the request to the model server was written (its `finish`)
 *   upstream  the model server's first body bytes were read (the answer's first `push`)
 *   written   the first body bytes to the client were handed to the socket (the response's first `write`)
 * Calls are taken one at a time (the benchmark's are), so the model-server request belongs to the latest arrival.
 * Tracing costs a little time of its own: a run with it is for the breakdown, not for the benchmark's table.
 */
import dc from 'node:diagnostics_channel'
import { writeFileSync } from 'node:fs'

const file = process.env.TRACE_FILE
const suffix = process.env.TRACE_PATH ?? '/v1/messages'
if (file) {
  const now = () => performance.timeOrigin + performance.now()
  /** @type {{arrival: number, sent?: number, upstream?: number, written?: number}[]} */
  const calls = []
  let current
  dc.subscribe('http.server.request.start', ({ request, response }) => {
    const path = (request.url ?? '').split('?')[0]
    if (!path.endsWith(suffix)) {
      current = undefined
      return
    }
    const call = { arrival: now() }
    current = call
    calls.push(call)
    const write = response.write
    response.write = function (...args) {
      call.written ??= now()
      return write.apply(this, args)
    }
  })
  dc.subscribe('http.client.request.start', ({ request }) => {
    const call = current
    if (!call || call.sent !== undefined) return
    // Published when the request is flushed (Node 20) or when it is created (later lines): `finish` is the write.
    call.sent = now()
    request.once('finish', () => (call.sent = now()))
    request.once('response', (answer) => {
      const push = answer.push
      answer.push = function (chunk, encoding) {
        if (chunk) call.upstream ??= now()
        return push.call(this, chunk, encoding)
      }
    })
  })
  process.on('exit', () => writeFileSync(file, JSON.stringify(calls)))
}
