import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEngine } from './engine/createEngine.js'
import type { Engine } from './engine/Engine.js'
import { startTestModelServer, type TestModelServer } from '../../tests/support/startTestModelServer.js'

let engine: Engine
let ms: TestModelServer

const post = async (path: string, body: unknown) => {
  const res = await fetch(`${ms.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  return { status: res.status, json: (await res.json()) as any }
}
const create = async (body: Record<string, unknown>) => {
  const r = await post('/api/create', { from: 'svc-tiny-chat', stream: false, ...body })
  expect(r, JSON.stringify(r.json)).toMatchObject({ status: 200 })
}
const options = { seed: 5, num_predict: 10 }
const generate = async (model: string, extra: Record<string, unknown>) =>
  (await post('/api/generate', { model, stream: false, ...extra, options: { ...options, ...(extra.options as object) } })).json
const chat = async (model: string, messages: unknown[], extra: Record<string, unknown> = {}) =>
  (await post('/api/chat', { model, messages, stream: false, ...extra, options: { ...options, ...(extra.options as object) } })).json

beforeAll(async () => {
  engine = await createEngine({ threads: 1 })
  ms = await startTestModelServer({ engine })
})
afterAll(async () => {
  await ms?.close()
  await engine?.dispose()
})

const chatml = (turns: Array<[string, string]>) => turns.map(([r, c]) => `<|im_start|>${r}\n${c}<|im_end|>\n`).join('') + '<|im_start|>assistant\n'

describe('/api/create templates', () => {
  it('an older .System/.Prompt/.Response template is rendered: same tokens as the raw prompt it renders to', async () => {
    const template = '{{ if .System }}<|im_start|>system\n{{ .System }}<|im_end|>\n{{ end }}<|im_start|>user\n{{ .Prompt }}<|im_end|>\n<|im_start|>assistant\n{{ .Response }}<|im_end|>\n'
    await create({ model: 'tmpl-legacy', template, system: 'Be brief.' })
    expect((await post('/api/show', { model: 'tmpl-legacy' })).json.template).toBe(template)
    const viaTemplate = await generate('tmpl-legacy', { prompt: 'Hi' })
    const raw = await generate('svc-tiny-chat', { prompt: chatml([['system', 'Be brief.'], ['user', 'Hi']]), raw: true })
    expect(viaTemplate.prompt_eval_count).toBe(raw.prompt_eval_count)
    expect(viaTemplate.response).toBe(raw.response)
    // Another template is another prompt.
    await create({ model: 'tmpl-qa', template: 'Q: {{ .Prompt }}\nA: {{ .Response }}' })
    const qa = await generate('tmpl-qa', { prompt: 'Hi' })
    const qaRaw = await generate('svc-tiny-chat', { prompt: 'Q: Hi\nA: ', raw: true })
    expect(qa.prompt_eval_count).toBe(qaRaw.prompt_eval_count)
    expect(qa.response).toBe(qaRaw.response)
    // raw skips the template.
    expect((await generate('tmpl-qa', { prompt: 'Q: Hi\nA: ', raw: true })).response).toBe(qaRaw.response)
  })

  it('a .Messages template renders the conversation (stored system first) for chat', async () => {
    const template = '{{- range .Messages }}<|im_start|>{{ .Role }}\n{{ .Content }}<|im_end|>\n{{ end }}<|im_start|>assistant\n'
    await create({ model: 'tmpl-msgs', template, system: 'S' })
    const viaTemplate = await chat('tmpl-msgs', [{ role: 'user', content: 'Hi' }])
    const raw = await generate('svc-tiny-chat', { prompt: chatml([['system', 'S'], ['user', 'Hi']]), raw: true })
    expect(viaTemplate.prompt_eval_count).toBe(raw.prompt_eval_count)
    expect(viaTemplate.message.content).toBe(raw.response)
    // Tools need the model file's chat template (function-call parsing); a template layer replaces it, so the model
    // lacks the `tools` capability (capabilitiesOf.ts) and the request is refused with Ollama's 400 for that.
    const tools = [{ type: 'function', function: { name: 'f', description: 'd', parameters: { type: 'object', properties: {} } } }]
    const refused = await post('/api/chat', { model: 'tmpl-msgs', messages: [{ role: 'user', content: 'x' }], tools, stream: false })
    expect([refused.status, refused.json.error]).toEqual([400, '"tmpl-msgs" does not support tools'])
    expect((await post('/api/show', { model: 'tmpl-msgs' })).json.capabilities).not.toContain('tools')
  })

  it('a template this server cannot render is refused at create time with a clear 400', async () => {
    for (const template of ['{{ template "x" . }}', '{{ printf "%s" .Prompt }}', '{{ .Unknown }}', '{{ if .System }}no end']) {
      const r = await post('/api/create', { model: 'tmpl-bad', from: 'svc-tiny-chat', template, stream: false })
      expect(r.status, template).toBe(400)
      expect(r.json.error).toMatch(/^template cannot be used by this server/)
    }
    expect((await post('/api/show', { model: 'tmpl-bad' })).status).toBe(404)
  })
})

describe('/api/create defaults applied on generate and chat', () => {
  it('system', async () => {
    await create({ model: 'def-system', system: 'You are terse.' })
    const base = await generate('svc-tiny-chat', { prompt: 'Hi', system: 'You are terse.' })
    expect(await generate('def-system', { prompt: 'Hi' })).toMatchObject({ response: base.response, prompt_eval_count: base.prompt_eval_count })
    const baseChat = await chat('svc-tiny-chat', [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'Hi' }])
    expect((await chat('def-system', [{ role: 'user', content: 'Hi' }])).message.content).toBe(baseChat.message.content)
    // The request's own system wins.
    const other = await generate('svc-tiny-chat', { prompt: 'Hi', system: 'Other.' })
    expect((await generate('def-system', { prompt: 'Hi', system: 'Other.' })).prompt_eval_count).toBe(other.prompt_eval_count)
  })

  it('parameters: temperature, stop, num_ctx (request options still win)', async () => {
    const greedy = await generate('svc-tiny-chat', { prompt: 'Once', options: { temperature: 0, seed: 1, num_predict: 24 } })
    const text: string = greedy.response
    expect(text.length).toBeGreaterThan(8)
    const stop = text.slice(6, 8)
    await create({ model: 'def-params', parameters: { temperature: 0, stop: [stop], num_ctx: 512 } })
    // temperature 0: greedy whatever the seed; stop: cut before the first match.
    for (const seed of [1, 2]) {
      expect((await generate('def-params', { prompt: 'Once', options: { seed, num_predict: 24 } })).response).toBe(text.slice(0, text.indexOf(stop)))
    }
    const ps = (await (await fetch(`${ms.url}/api/ps`)).json()) as { models: Array<{ name: string; context_length: number }> }
    expect(ps.models.find((m) => m.name === 'def-params:latest')?.context_length).toBe(512)
    // A request's own options override the stored ones.
    const overridden = await generate('def-params', { prompt: 'Once', options: { temperature: 0, seed: 1, num_predict: 24, stop: ['\u0001never'] } })
    expect(overridden.response).toBe(text)
  })

  it('messages come before the request (chat and generate)', async () => {
    const stored = [{ role: 'user', content: 'Hello' }, { role: 'assistant', content: 'Hi there' }]
    await create({ model: 'def-msgs', messages: stored })
    const base = await chat('svc-tiny-chat', [...stored, { role: 'user', content: 'x' }])
    const viaChat = await chat('def-msgs', [{ role: 'user', content: 'x' }])
    expect(viaChat.prompt_eval_count).toBe(base.prompt_eval_count)
    expect(viaChat.message.content).toBe(base.message.content)
    const viaGenerate = await generate('def-msgs', { prompt: 'x' })
    expect(viaGenerate.prompt_eval_count).toBe(base.prompt_eval_count)
    expect(viaGenerate.response).toBe(base.message.content)
  })

  it('every response matched openapi/modelserver.yaml', () => {
    expect(ms.mismatches).toEqual([])
  })
})
