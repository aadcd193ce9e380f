import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/** What the scripted model server answers one request with: a JSON body, or frames written one by one. */
export type ScriptedAnswer = { status?: number; contentType?: string; json?: unknown; frames?: string[]; delayMs?: number }

export type ScriptedModelServer = {
  url: string
  /** Every request, in order: its path and JSON body. */
  requests: { path: string; body: Record<string, unknown> }[]
  /** Requests whose connection closed before all their frames were written, with how many were. */
  cut: { path: string; sent: number }[]
  close: () => Promise<void>
}

/**
 * A model server that answers as the test scripts it, over real HTTP (so the gateway's client, pool and
 * metering run as they do against the real one): streams are written frame by frame, `delayMs` apart, and a
 * connection closed before the last frame is reported in `cut`.
 */
export async function startScriptedModelServer(script: (path: string, body: Record<string, unknown>) => ScriptedAnswer): Promise<ScriptedModelServer> {
  const requests: ScriptedModelServer['requests'] = []
  const cut: ScriptedModelServer['cut'] = []
  const server: Server = createServer((req, res) => {
    let text = ''
    req.on('data', (d: Buffer) => (text += d.toString('utf8')))
    req.on('end', () => {
      const body = (text === '' ? {} : JSON.parse(text)) as Record<string, unknown>
      const path = (req.url ?? '/').split('?')[0]!
      requests.push({ path, body })
      const answer = script(path, body)
      if (answer.json !== undefined || !answer.frames) {
        res.writeHead(answer.status ?? 200, { 'content-type': 'application/json' })
        res.end(JSON.stringify(answer.json ?? {}))
        return
      }
      const frames = answer.frames
      res.writeHead(answer.status ?? 200, { 'content-type': answer.contentType ?? 'application/x-ndjson' })
      let sent = 0
      let timer: NodeJS.Timeout | undefined
      const next = () => {
        if (sent === frames.length) return void res.end()
        res.write(frames[sent++])
        timer = setTimeout(next, answer.delayMs ?? 0)
      }
      res.on('close', () => {
        clearTimeout(timer)
        if (sent < frames.length || !res.writableFinished) cut.push({ path, sent })
      })
      next()
    })
  })
  server.keepAliveTimeout = 60_000
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    cut,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** Ollama `/api/chat` NDJSON: `count` one-token chunks, then the `done` chunk with the model server's counts. */
export function ollamaChatFrames(count: number, evalCount = count): string[] {
  const at = '2026-11-22T12:00:00Z'
  return [
    ...Array.from({ length: count }, (_, i) => `${JSON.stringify({ model: 'm', created_at: at, message: { role: 'assistant', content: `t${i}` }, done: false })}\n`),
    `${JSON.stringify({ model: 'm', created_at: at, message: { role: 'assistant', content: '' }, done: true, done_reason: 'stop', prompt_eval_count: 3, eval_count: evalCount, eval_duration: 1e7 })}\n`,
  ]
}

/** Ollama `/api/generate` NDJSON (see `ollamaChatFrames`). */
export function ollamaGenerateFrames(count: number, evalCount = count): string[] {
  const at = '2026-11-22T12:00:00Z'
  return [
    ...Array.from({ length: count }, (_, i) => `${JSON.stringify({ model: 'm', created_at: at, response: `t${i}`, done: false })}\n`),
    `${JSON.stringify({ model: 'm', created_at: at, response: '', done: true, done_reason: 'stop', prompt_eval_count: 3, eval_count: evalCount, eval_duration: 1e7 })}\n`,
  ]
}
