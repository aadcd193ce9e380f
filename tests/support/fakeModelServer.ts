import { once } from 'node:events'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import express from 'express'

export type FakeModelServer = { url: string; calls: { path: string; body: unknown }[]; close: () => Promise<void> }

/** A stand-in for the model server with its documented non-streaming replies (deterministic text). */
export async function startFakeModelServer(): Promise<FakeModelServer> {
  const calls: { path: string; body: unknown }[] = []
  const app = express()
  app.use(express.json())
  app.use((req, _res, next) => {
    calls.push({ path: req.path, body: req.body })
    next()
  })
  const created_at = '2026-11-22T12:00:00Z'
  app.get('/api/version', (_req, res) => res.json({ version: '0.12.0' }))
  app.get('/api/tags', (_req, res) =>
    res.json({
      models: [
        {
          name: 'svc-tiny-chat:latest',
          model: 'svc-tiny-chat:latest',
          modified_at: '2026-11-22T11:58:00.123456789-07:00',
          size: 524288,
          digest: '2c3a8a4e9d8f7b6a5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b',
          details: { format: 'gguf', family: 'llama', families: null, parameter_size: '0.1M', quantization_level: 'F32' },
        },
      ],
    }),
  )
  app.use((req, res, next) => {
    if (req.body?.model === 'missing:latest') return void res.status(404).json({ error: "model 'missing:latest' not found" })
    if (req.body?.options?.num_predict === 4096) return void res.status(400).json({ error: 'num_predict too large for this model' })
    next()
  })
  app.post('/api/generate', (req, res) => {
    const prompt = String(req.body?.prompt ?? '')
    res.json({
      model: req.body.model,
      created_at,
      response: prompt.includes('Motion:') ? 'FOR: it helps the company.' : `echo: ${prompt.slice(0, 40)}`,
      done: true,
      done_reason: 'stop',
      total_duration: 12_500_000,
      prompt_eval_count: 5,
      eval_count: 7,
    })
  })
  app.post('/api/chat', (req, res) => {
    const last = req.body.messages.at(-1)?.content ?? ''
    res.json({
      model: req.body.model,
      created_at,
      message: { role: 'assistant', content: `reply to ${last}` },
      done: true,
      done_reason: 'stop',
      total_duration: 9_000_000,
      prompt_eval_count: 4,
      eval_count: 3,
    })
  })
  app.post('/api/embed', (req, res) => res.json({ model: req.body.model, embeddings: [[0.1, 0.2, 0.3, 0.4]] }))
  const server: Server = app.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}
