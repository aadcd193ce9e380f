/**
 * `pay2store models …`: the Ollama CLI's model commands against any model server URL (`--host`, default
 * `$OLLAMA_HOST` or http://127.0.0.1:11434), through the generated model-server client. `pull` and
 * `push` read the NDJSON progress stream (each line checked against the document's `ProgressChunk`) and
 * draw one bar per layer digest; `create --from` imports a local GGUF; `run` streams a chat reply as it is generated.
 */
import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { basename } from 'node:path'
import { createClient } from '../../generated/modelserver/client/index.js'
import { chat, checkBlob, copyModel, createModel, deleteModel, listModels, listRunningModels, pullModel, pushModel, showModel } from '../../generated/modelserver/sdk.gen.js'
import { zChatChunk, zProgressChunk } from '../../generated/modelserver/zod.gen.js'
import { CliError, EXIT, fileReadFailure, unreachable } from './CliError.js'
import type { Output } from './output.js'
import { createBars } from './progress.js'
import { sendFile } from './sendFile.js'
import { wrapText as wrap } from './wrapText.js'

type Result = { data?: unknown; error?: unknown; response?: Response }

export function modelClient(host: string) {
  return createClient({ baseUrl: host.replace(/\/$/, '') })
}

async function call<T>(host: string, what: string, run: () => Promise<Result>): Promise<T> {
  let result: Result
  try {
    result = await run()
  } catch (error) {
    throw unreachable(host, error, 'modelserver')
  }
  if (!result.response) throw unreachable(host, result.error, 'modelserver') // the generated client returns, not throws, a failed fetch
  if (result.error === undefined && result.response.ok) return result.data as T
  const status = result.response?.status ?? 0
  const message = (result.error as { error?: unknown } | undefined)?.error
  const text = typeof message === 'string' ? message : `${what} answered ${status}`
  if (status === 404) throw new CliError('model_not_found', text, EXIT.notFound)
  throw new CliError(`http_${status}`, `${what} answered ${status}: ${text}`, status === 400 ? EXIT.usage : EXIT.server)
}

const size = (n: number) => (n >= 1e9 ? `${(n / 1e9).toFixed(1)} GB` : n >= 1e6 ? `${(n / 1e6).toFixed(1)} MB` : `${(n / 1e3).toFixed(0)} KB`)
const table = (rows: string[][]) => {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)))
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('   ').trimEnd()).join('\n')
}

/** `details.test_model` / `note`: our model server's word that a model has random weights (another server sends neither). */
type Details = { test_model?: boolean; note?: string } & Record<string, unknown>
type Model = { name: string; digest: string; size: number; modified_at?: string; expires_at?: string; size_vram?: number; details?: Details }

const REAL_MODEL_HINT = 'To run a real model: `pay2store models pull NAME` from a registry, or `pay2store models create NAME --from FILE.gguf`'

export async function list(host: string, out: Output) {
  const data = await call<{ models: Model[] }>(host, 'GET /api/tags', () => listModels({ client: modelClient(host) }))
  out.result(data, (d) => {
    const rows = table([['NAME', 'ID', 'SIZE', 'MODIFIED'], ...d.models.map((m) => [m.name, m.digest.replace(/^sha256:/, '').slice(0, 12), size(m.size), m.modified_at ?? ''])])
    const tests = d.models.filter((m) => m.details?.test_model === true).map((m) => m.name)
    if (tests.length === 0) return rows
    return [rows, '', ...wrap(`test models with random weights (their output is gibberish, by design): ${tests.join(', ')}`, 79), ...wrap(REAL_MODEL_HINT, 79)].join('\n')
  })
}

export async function ps(host: string, out: Output) {
  const data = await call<{ models: Model[] }>(host, 'GET /api/ps', () => listRunningModels({ client: modelClient(host) }))
  out.result(data, (d) => table([['NAME', 'ID', 'SIZE', 'UNTIL'], ...d.models.map((m) => [m.name, m.digest.replace(/^sha256:/, '').slice(0, 12), size(m.size), m.expires_at ?? ''])]))
}

export async function show(host: string, model: string, out: Output) {
  const data = await call<{ details?: Details; parameters?: string; template?: string; modelfile?: string; capabilities?: string[] }>(host, 'POST /api/show', () =>
    showModel({ client: modelClient(host), body: { model } }),
  )
  out.result(data, (d) => {
    const details: Details = d.details ?? {}
    return [
      ...(details.test_model === true && details.note ? ['  Note', ...wrap(details.note, 79, '    '), ''] : []),
      `  Model`,
      ...Object.entries(details).filter(([k, v]) => k !== 'note' && (typeof v === 'string' || typeof v === 'number')).map(([k, v]) => `    ${k.padEnd(20)}${v}`),
      ...(d.capabilities?.length ? ['', '  Capabilities', ...d.capabilities.map((c) => `    ${c}`)] : []),
      ...(d.parameters ? ['', '  Parameters', ...d.parameters.split('\n').map((l) => `    ${l}`)] : []),
    ].join('\n')
  })
}

export async function cp(host: string, source: string, destination: string, out: Output) {
  await call(host, 'POST /api/copy', () => copyModel({ client: modelClient(host), body: { source, destination } }))
  out.result({ source, destination, status: 'success' }, () => `copied '${source}' to '${destination}'`)
}

export async function rm(host: string, model: string, out: Output) {
  await call(host, 'DELETE /api/delete', () => deleteModel({ client: modelClient(host), body: { model } }))
  out.result({ model, status: 'success' }, () => `deleted '${model}'`)
}

/** Splits an NDJSON byte stream into parsed lines. */
async function* ndjson(stream: ReadableStream<Uint8Array>): AsyncGenerator<unknown> {
  const decoder = new TextDecoder()
  let buffered = ''
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(chunk, { stream: true })
    let nl: number
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl).trim()
      buffered = buffered.slice(nl + 1)
      if (line) yield JSON.parse(line)
    }
  }
  if (buffered.trim()) yield JSON.parse(buffered)
}

async function openStream(host: string, what: string, run: () => Promise<Result>): Promise<ReadableStream<Uint8Array>> {
  const stream = await call<ReadableStream<Uint8Array>>(host, what, run)
  if (!stream) throw new CliError('bad_response', `${what} answered without a body`, EXIT.server)
  return stream
}

/** `pull` / `push`: one bar per layer digest from the progress stream; the statuses in order. */
export async function transfer(kind: 'pull' | 'push', host: string, model: string, insecure: boolean, out: Output) {
  const op = kind === 'pull' ? pullModel : pushModel
  const stream = await openStream(host, `POST /api/${kind}`, () => op({ client: modelClient(host), body: { model, insecure, stream: true }, parseAs: 'stream' }))
  const bars = createBars(!out.json)
  const statuses: string[] = []
  const layers = new Map<string, { total: number; completed: number }>()
  try {
    for await (const raw of ndjson(stream)) {
      if (raw && typeof raw === 'object' && 'error' in raw) {
        throw new CliError(`${kind}_failed`, `${kind} ${model}: ${String((raw as { error: unknown }).error)}`, /not found|unknown|does not exist/i.test(String((raw as { error: unknown }).error)) ? EXIT.notFound : EXIT.server)
      }
      const line = zProgressChunk.safeParse(raw)
      if (!line.success) throw new CliError('bad_response', `the ${kind} stream sent a line that is not a ProgressChunk: ${JSON.stringify(raw).slice(0, 200)}`, EXIT.server)
      const p = line.data
      if (p.digest && p.total !== undefined) {
        layers.set(p.digest, { total: p.total, completed: p.completed ?? 0 })
        bars.update(p.digest, `${kind === 'pull' ? 'pulling' : 'pushing'} ${p.digest.replace(/^sha256:/, '').slice(0, 12)}`, p.completed ?? 0, p.total)
      } else if (statuses.at(-1) !== p.status && !out.json) {
        // a step's status follows the bars drawn so far, on its own line
        bars.done()
        if (!bars.print(p.status)) out.line(p.status)
      }
      if (statuses.at(-1) !== p.status) statuses.push(p.status)
    }
  } finally {
    bars.close()
  }
  if (statuses.at(-1) !== 'success') throw new CliError(`${kind}_failed`, `${kind} ${model} ended without success (last status: ${statuses.at(-1) ?? 'none'})`, EXIT.server)
  // the stream's own `success` is printed above already, as a status
  out.result({ model, status: 'success', statuses, layers: Object.fromEntries(layers) }, () => `${kind === 'pull' ? 'pulled' : 'pushed'} '${model}'`)
}

/** `run <model> <prompt…>`: streams the reply of one chat turn to stdout; first, on stderr, a word if the model is a test model. */
export async function run(host: string, model: string, prompt: string, options: { seed?: number; numPredict?: number }, out: Output) {
  if (!out.json) {
    // best effort: a server without /api/show, or a model it does not know, is left to the chat call to report
    const shown = await showModel({ client: modelClient(host), body: { model } }).catch(() => undefined)
    const details = (shown?.data as { details?: Details } | undefined)?.details
    if (details?.test_model === true) process.stderr.write(`${wrap(`note: ${model} is a test model with random weights; its reply is gibberish, by design. ${REAL_MODEL_HINT}.`, 79).join('\n')}\n`)
  }
  const stream = await openStream(host, 'POST /api/chat', () =>
    chat({
      client: modelClient(host),
      body: { model, messages: [{ role: 'user', content: prompt }], stream: true, options: { ...(options.seed !== undefined ? { seed: options.seed } : {}), ...(options.numPredict !== undefined ? { num_predict: options.numPredict } : {}) } },
      parseAs: 'stream',
    }),
  )
  let content = ''
  let last: unknown
  for await (const raw of ndjson(stream)) {
    if (raw && typeof raw === 'object' && 'error' in raw) throw new CliError('chat_failed', `run ${model}: ${String((raw as { error: unknown }).error)}`, EXIT.server)
    const chunk = zChatChunk.safeParse(raw)
    if (!chunk.success) throw new CliError('bad_response', `the chat stream sent a line that is not a ChatChunk: ${JSON.stringify(raw).slice(0, 200)}`, EXIT.server)
    content += chunk.data.message.content
    if (!out.json) process.stdout.write(chunk.data.message.content)
    last = chunk.data
  }
  if (out.json) out.result({ model, content, final: last }, () => '')
  else process.stdout.write('\n')
}

/**
 * `create <name> --from <file.gguf>`: imports a local GGUF as Ollama's own client does, offline: hashes the
 * file, uploads it to `POST /api/blobs/<digest>` unless the server has it (`HEAD`), then `POST /api/create`
 * with `files: {<file name>: <digest>}`, printing the statuses it streams.
 */
export async function create(host: string, model: string, file: string, out: Output) {
  let bytes: number
  try {
    const s = await stat(file)
    if (!s.isFile()) throw new Error('not a regular file')
    bytes = s.size
  } catch (error) {
    throw new CliError('bad_file', `cannot read ${file}: ${fileReadFailure(error)}`, EXIT.usage)
  }
  if (bytes === 0) throw new CliError('bad_file', `${file} is empty; a model is a GGUF file`, EXIT.usage)
  const base = host.replace(/\/$/, '')
  const bars = createBars(!out.json)
  const say = (text: string) => {
    if (!out.json && !bars.print(text)) out.line(text)
  }
  const statuses: string[] = []
  try {
    const hash = createHash('sha256')
    let hashed = 0
    for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 })) {
      hash.update(chunk as Buffer)
      hashed += (chunk as Buffer).length
      bars.update('hash', 'hashing', hashed, bytes)
    }
    const digest = `sha256:${hash.digest('hex')}`
    bars.done()
    const head = await checkBlob({ client: modelClient(host), path: { digest } }).catch((error: unknown) => {
      throw unreachable(host, error, 'modelserver')
    })
    if (!head.response) throw unreachable(host, head.error, 'modelserver')
    if (head.response.status === 200) say(`the server has ${digest} already`)
    else {
      // the raw bytes, as Ollama's own client uploads a GGUF
      const sent = await sendFile({
        url: `${base}/api/blobs/${digest}`,
        path: file,
        size: bytes,
        headers: { 'content-type': 'application/octet-stream' },
        chunkBytes: 1024 * 1024,
        service: 'modelserver',
        onProgress: (n, total) => bars.update('blob', 'uploading', n, total),
      })
      bars.done()
      if (sent.status !== 200 && sent.status !== 201) {
        const error = (() => {
          try {
            return String((JSON.parse(sent.body) as { error?: unknown }).error ?? sent.body)
          } catch {
            return sent.body.slice(0, 300)
          }
        })()
        throw new CliError(`http_${sent.status}`, `POST /api/blobs answered ${sent.status}: ${error}`, sent.status === 400 ? EXIT.usage : EXIT.server)
      }
    }
    const stream = await openStream(host, 'POST /api/create', () =>
      createModel({ client: modelClient(host), body: { model, files: Object.fromEntries([[basename(file), digest]]), stream: true }, parseAs: 'stream' }),
    )
    for await (const raw of ndjson(stream)) {
      if (raw && typeof raw === 'object' && 'error' in raw) throw new CliError('create_failed', `create ${model}: ${String((raw as { error: unknown }).error)}`, EXIT.server)
      const line = zProgressChunk.safeParse(raw)
      if (!line.success) throw new CliError('bad_response', `the create stream sent a line that is not a ProgressChunk: ${JSON.stringify(raw).slice(0, 200)}`, EXIT.server)
      statuses.push(line.data.status)
      say(line.data.status)
    }
  } finally {
    bars.close()
  }
  if (statuses.at(-1) !== 'success') throw new CliError('create_failed', `create ${model} ended without success (last status: ${statuses.at(-1) ?? 'none'})`, EXIT.server)
  out.result({ model, status: 'success', statuses }, () => `created '${model}'; try: pay2store models run ${model} "hello"`)
}
