/**
 * `npm run bench -- llm -- --trace`: loaded with `--import` into the gateway and the bare proxy, it times each
 * proxied call from node:http's own diagnostics channels (no code of theirs changed) and writes the times to
 * `TRACE_FILE` when the process exits. Per call whose path ends with `TRACE_PATH` (default `/v1/messages`),
 * epoch milliseconds of:
 *   arrival   node:http parsed the request's headers (`http.server.request.start`)
 *   sent      the request to the model server was written (its `finish`)
 *   upstream  the model server's first body bytes were read (the answer's first `push`)
 *   written   the first body bytes to the client were written (the response's first `write`)
 *   stages    [name, time] as each named stage of the app's list started (its `pay2store:stage:start` channel)
 *   wire      those bytes reached the socket (its first `_write`/`_writev` since): node:http corks the socket
 *             for each write and uncorks it in a nextTick, which waits for every microtask queued before it
 *             (a first token can wait there behind the gateway's own metering; this stamp shows it)
 * In a process that only serves (the model server) a call has `arrival`, `written` and `wire`.
 * Calls are taken one at a time (the benchmark's are), so the model-server request belongs to the latest arrival.
 * Tracing costs a little time of its own: a run with it is for the breakdown, not for the benchmark's table.
 */
import dc from 'node:diagnostics_channel'
import { writeFileSync } from 'node:fs'

const file = process.env.TRACE_FILE
const suffix = process.env.TRACE_PATH ?? '/v1/messages'
if (file) {
  const now = () => performance.timeOrigin + performance.now()
  /** @type {{arrival: number, sent?: number, upstream?: number, written?: number, wire?: number}[]} */
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
      if (call.written === undefined) {
        call.written = now()
        // The socket's next write, once: the wrappers put the socket's own methods back when it comes.
        const socket = this.socket
        const originals = ['_writev', '_write'].map((method) => [method, Object.getOwnPropertyDescriptor(socket ?? {}, method)])
        const restore = () => {
          for (const [method, own] of originals) {
            if (own) Object.defineProperty(socket, method, own)
            else delete socket[method]
          }
        }
        for (const [method] of originals) {
          const original = socket?.[method]
          if (typeof original !== 'function') continue
          socket[method] = function (...writeArgs) {
            call.wire ??= now()
            restore()
            return original.apply(this, writeArgs)
          }
        }
      }
      return write.apply(this, args)
    }
  })
  // The gateway's and the model server's named stages (src/shared/http/runOperationStages.ts): when each started.
  dc.subscribe('pay2store:stage:start', ({ stage }) => {
    if (current) (current.stages ??= []).push([stage, now()])
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
