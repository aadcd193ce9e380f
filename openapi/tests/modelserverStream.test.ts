/**
 * (d) The SDK generated for the model server streams `/api/chat` from the Prism mock
 * (`parseAs: 'stream'`); the NDJSON is split into lines and every line is validated with the generated
 * Zod chunk schema. The same is done for `/api/generate`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient } from '../../generated/modelserver/client/index.js'
import { chat, generate } from '../../generated/modelserver/sdk.gen.js'
import { zChatChunk, zChatRequest, zGenerateChunk, zGenerateRequest } from '../../generated/modelserver/zod.gen.js'
import { retryOnAddressInUse } from '../../conformance/testSupport/retryOnAddressInUse.js'
import { freePort, type PrismMock, startPrism } from '../../scripts/mock.js'
import { documentExists } from './specHelpers.js'

/** Reads a byte stream and yields its NDJSON lines as they complete (a line may span chunks). */
async function* ndjson(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder()
  let buffered = ''
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(chunk, { stream: true })
    let nl = buffered.indexOf('\n')
    while (nl >= 0) {
      const line = buffered.slice(0, nl).trim()
      buffered = buffered.slice(nl + 1)
      if (line !== '') yield line
      nl = buffered.indexOf('\n')
    }
  }
  buffered += decoder.decode()
  if (buffered.trim() !== '') yield buffered.trim()
}

describe.runIf(documentExists('modelserver'))('model-server SDK streaming against Prism', () => {
  let mock: PrismMock
  let client: ReturnType<typeof createClient>

  beforeAll(async () => {
    mock = await retryOnAddressInUse(async () => await startPrism('openapi/modelserver.yaml', await freePort()))
    client = createClient({ baseUrl: mock.url })
  })
  afterAll(async () => {
    await mock?.stop()
  })

  it('POST /api/chat with stream: true — every line is a valid ChatChunk, the last one is done', async () => {
    const body = zChatRequest.parse({
      model: 'svc-tiny-chat:latest',
      messages: [{ role: 'user', content: 'Say hello.' }],
      stream: true,
      options: { temperature: 0, seed: 42 },
    })
    const result = await chat({ client, body, parseAs: 'stream', headers: { Accept: 'application/x-ndjson' } })
    expect(result.response?.status).toBe(200)
    expect(result.response?.headers.get('content-type')).toMatch(/^application\/x-ndjson/)
    const stream = result.data as unknown as ReadableStream<Uint8Array>
    expect(stream).toBeInstanceOf(ReadableStream)
    const chunks = []
    for await (const line of ndjson(stream)) chunks.push(zChatChunk.parse(JSON.parse(line)))
    expect(chunks.length).toBeGreaterThan(1)
    expect(chunks.slice(0, -1).every((c) => !c.done)).toBe(true)
    const last = chunks.at(-1)!
    expect(last.done).toBe(true)
    expect(last.done_reason).toBeDefined()
    expect(last.eval_count).toBeTypeOf('number')
    expect(chunks.every((c) => c.message.role === 'assistant')).toBe(true)
  })

  it('POST /api/generate with stream: true — every line is a valid GenerateChunk', async () => {
    const body = zGenerateRequest.parse({ model: 'svc-tiny-chat:latest', prompt: 'Why is the sky blue?', stream: true })
    const result = await generate({ client, body, parseAs: 'stream', headers: { Accept: 'application/x-ndjson' } })
    expect(result.response?.status).toBe(200)
    const lines = []
    for await (const line of ndjson(result.data as unknown as ReadableStream<Uint8Array>)) {
      lines.push(zGenerateChunk.parse(JSON.parse(line)))
    }
    expect(lines.length).toBeGreaterThan(1)
    expect(lines.at(-1)!.done).toBe(true)
  })

  it('the chunk schema rejects a malformed line (the check is not vacuous)', () => {
    expect(zChatChunk.safeParse({ model: 'm', done: false }).success).toBe(false)
    expect(zChatChunk.safeParse({ model: 'm', created_at: 'yesterday', message: { role: 'assistant', content: '' }, done: false }).success).toBe(false)
  })
})
