/**
 * Which installed models can chat, asked of a real model server (its built-in chat and embedding models):
 * /dojo offers only these, so a user never picks the embedding model and gets "does not support chat".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEngine } from '../../modelserver/engine/createEngine.js'
import type { Engine } from '../../modelserver/engine/Engine.js'
import { startTestModelServer, type TestModelServer } from '../../../tests/support/startTestModelServer.js'
import { chatCapableModels } from './chatCapableModels.js'
import { ModelServerPool } from '../../modelserverClient/ModelServerPool.js'

let engine: Engine
let ms: TestModelServer

beforeAll(async () => {
  engine = await createEngine({ threads: 1 })
  ms = await startTestModelServer({ engine })
}, 60_000)
afterAll(async () => {
  await ms?.close()
  await engine?.dispose()
})

describe('chatCapableModels', () => {
  it('keeps the models whose /api/show lists completion and leaves out the embedding model', async () => {
    const pool = new ModelServerPool({ baseUrls: [ms.url], timeoutMs: 10_000 })
    const installed = (await pool.listModels()).map((m) => m.name)
    expect(installed).toContain('svc-tiny-embed:latest')
    const chat = await chatCapableModels(pool)
    expect(chat).toContain('svc-tiny-chat:latest')
    expect(chat).not.toContain('svc-tiny-embed:latest')
    // Each kept model really chats; the one left out really refuses.
    for (const model of chat) expect((await fetch(`${ms.url}/api/chat`, { method: 'POST', body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], stream: false, options: { num_predict: 2 } }) })).status, model).toBe(200)
    expect((await fetch(`${ms.url}/api/chat`, { method: 'POST', body: JSON.stringify({ model: 'svc-tiny-embed', messages: [{ role: 'user', content: 'hi' }], stream: false }) })).status).toBe(400)
  })

  it('throws when the model list cannot be read (the page then cannot tell)', async () => {
    const pool = new ModelServerPool({ baseUrls: ['http://127.0.0.1:9'], timeoutMs: 2_000 })
    await expect(chatCapableModels(pool)).rejects.toThrow()
  })
})
