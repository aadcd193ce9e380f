/**
 * Benchmark: generation throughput through the model server's HTTP API versus the same generation in-process.
 *
 *   npx tsx scripts/bench/modelserverThroughput.ts [--tokens 400] [--runs 5] [--threads 1]
 *
 * One engine (llama.cpp threads set explicitly) serves both paths. In-process: `EngineModel.complete` on the
 * model the server has loaded. HTTP: `POST /api/generate` (`stream: false`, then `stream: true`) on a server in
 * this process. Same prompt, seed and `num_predict`; tokens per second = generated tokens / wall-clock seconds,
 * median of the runs. Prints the figures and the HTTP/in-process ratio.
 */
import type { AddressInfo } from 'node:net'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { createModelServer } from '../../src/modelserver/app.js'
import { loadModelServerConfig } from '../../src/modelserver/config.js'
import { createEngine } from '../../src/modelserver/engine/createEngine.js'

const { values } = parseArgs({ options: { tokens: { type: 'string', default: '400' }, runs: { type: 'string', default: '5' }, threads: { type: 'string', default: '1' } } })
const tokens = Number(values.tokens)
const runs = Number(values.runs)
const threads = Number(values.threads)
const options = { seed: 7, temperature: 0.8, num_predict: tokens }
const prompt = 'Once upon a time'

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-modelserver-'))
const engine = await createEngine({ threads })
const server = await createModelServer({ config: { ...loadModelServerConfig({}), modelsDir: dir, threads }, engine, processMetrics: false })
const http = server.app.listen(0, '127.0.0.1')
await new Promise((r) => http.once('listening', r))
const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`

try {
  const post = (body: unknown) => fetch(`${url}/api/generate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  // Load (and warm) the model through the server, then take the very same EngineModel for the in-process path.
  await (await post({ model: 'svc-tiny-chat', prompt, stream: false, options: { ...options, num_predict: 8 }, keep_alive: -1 })).json()
  const record = await server.ctx.findModel('svc-tiny-chat')
  const model = server.ctx.residency.get(record)!.model

  const inProcess: number[] = []
  const inProcessStream: number[] = []
  const viaHttp: number[] = []
  const viaHttpStream: number[] = []
  let produced = 0
  for (let i = 0; i < runs; i++) {
    let t = performance.now()
    const r = await model.complete({ prompt, options })
    inProcess.push(r.evalCount / ((performance.now() - t) / 1000))
    produced = r.evalCount

    t = performance.now()
    let pieces = 0
    const rs = await model.complete({ prompt, options, onToken: () => void pieces++ })
    inProcessStream.push(rs.evalCount / ((performance.now() - t) / 1000))

    t = performance.now()
    const h = (await (await post({ model: 'svc-tiny-chat', prompt, stream: false, options })).json()) as { eval_count: number }
    viaHttp.push(h.eval_count / ((performance.now() - t) / 1000))

    t = performance.now()
    const res = await post({ model: 'svc-tiny-chat', prompt, options })
    const text = await res.text()
    const last = JSON.parse(text.trimEnd().split('\n').at(-1)!) as { eval_count: number }
    viaHttpStream.push(last.eval_count / ((performance.now() - t) / 1000))
  }
  const a = median(inProcess)
  const b = median(viaHttp)
  const c = median(viaHttpStream)
  const d = median(inProcessStream)
  console.log(`tokens per run: ${produced} (num_predict ${tokens}), runs: ${runs}, llama threads: ${threads}`)
  console.log(`in-process          : ${a.toFixed(0)} tokens/s`)
  console.log(`HTTP stream:false   : ${b.toFixed(0)} tokens/s (${((b / a) * 100).toFixed(1)}% of in-process)`)
  console.log(`in-process, onToken : ${d.toFixed(0)} tokens/s`)
  console.log(`HTTP stream:true    : ${c.toFixed(0)} tokens/s (${((c / d) * 100).toFixed(1)}% of in-process with onToken)`)
} finally {
  http.closeAllConnections()
  http.close()
  await server.close()
  await engine.dispose()
  await rm(dir, { recursive: true, force: true })
}
