/**
 * Failure files and `npm run conformance -- --replay`: a planted failure is found, written as a file, and the
 * replay of that file reproduces it (exit 1) — and stops reproducing it (exit 0) once the fault is gone.
 * - a fuzz violation: a proxy in front of a live model server drops the `Allow` header of its 405 answers; the
 *   fuzzer's unsupported_method check fails, and the replay sends the same request again;
 * - a failed row: a machine expecting what the server does not answer; the replay runs it again with its seed.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { once } from 'node:events'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEngine } from '../src/modelserver/engine/createEngine.js'
import type { Engine } from '../src/modelserver/engine/Engine.js'
import { startTestModelServer, type TestModelServer } from '../tests/support/startTestModelServer.js'
import { conformanceCli } from './cli.js'
import { fuzz } from './fuzz/fuzz.js'
import { fuzzCase, readFailureFile, writeFailureFile } from './replay.js'

let engine: Engine
let modelServer: TestModelServer
let proxy: Server
let proxyUrl: string
/** The planted fault: while on, 405 answers lose their Allow header on the way to the client. */
let dropAllow = true
const dir = mkdtempSync(join(tmpdir(), 'replay-'))

beforeAll(async () => {
  engine = await createEngine({ threads: 1 })
  modelServer = await startTestModelServer({ engine })
  const target = new URL(modelServer.url)
  proxy = createServer((req, res) => {
    const upstream = httpRequest({ hostname: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      const headers = { ...answer.headers }
      if (dropAllow && answer.statusCode === 405) delete headers.allow
      res.writeHead(answer.statusCode ?? 502, headers)
      answer.pipe(res)
    })
    upstream.once('error', () => res.destroy())
    req.pipe(upstream)
  })
  proxy.listen(0, '127.0.0.1')
  await once(proxy, 'listening')
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`
}, 60_000)
afterAll(async () => {
  proxy?.close()
  await modelServer?.close()
  await engine?.dispose()
})

const cli = async (args: string[]) => {
  const r = { code: 0, stdout: '', stderr: '' }
  r.code = await conformanceCli(args, { stdout: (t) => (r.stdout += t), stderr: (t) => (r.stderr += t) })
  return r
}

describe('a planted fuzz violation', () => {
  it('is found, written as a file, and its replay reproduces it until the fault is gone', async () => {
    dropAllow = true
    const report = await fuzz({ urls: { modelserver: proxyUrl }, seed: 7, count: 20, seconds: 60, chainsPerRoot: 0, concurrency: 2 })
    const violation = report.violations.find((v) => v.check === 'unsupported_method')
    expect(violation?.problem).toMatch(/405 without an Allow header/)
    const file = writeFailureFile(join(dir, 'fuzz'), fuzzCase(violation!, 7, { modelserver: proxyUrl }, 30_000))
    expect(readFailureFile(file)).toMatchObject({ kind: 'fuzz', check: 'unsupported_method', steps: [{ server: 'modelserver', request: { method: violation!.request.method } }] })

    const again = await cli(['--replay', file])
    expect(again.code, again.stdout + again.stderr).toBe(1)
    expect(again.stdout).toMatch(/reproduced: unsupported_method fails again/)

    dropAllow = false
    const fixed = await cli(['--replay', file])
    expect(fixed.code, fixed.stdout).toBe(0)
    expect(fixed.stdout).toMatch(/not reproduced: unsupported_method holds now/)
    // against the server itself (no proxy): the URL of the file is replaced by --modelserver
    expect((await cli(['--replay', file, '--modelserver', modelServer.url])).code).toBe(0)
    expect(modelServer.mismatches).toEqual([])
  }, 300_000)
})

describe('a planted row failure', () => {
  it('writes the failed row as a file; its replay runs the machine to that row again', async () => {
    const machine = join(dir, 'broken.yaml')
    writeFileSync(machine, ['machine: broken', "seed: '001 §3.1'", 'server: modelserver', 'driver: http', 'initial: a', 'rows:',
      '  - { id: v-1, from: a, event: GET /api/version, request: { method: GET, path: /api/version }, expect: { status: 200 }, to: b }',
      '  - { id: v-2, from: b, event: GET /api/tags, request: { method: GET, path: /api/tags }, expect: { status: 418 }, to: b }', ''].join('\n'))
    const failures = join(dir, 'rows')
    const run = await cli(['--modelserver', modelServer.url, '--machine', machine, '--failures', failures, '--seed', '5'])
    expect(run.code).toBe(1)
    const [name] = readdirSync(failures)
    expect(run.stdout).toContain(`failure written: ${join(failures, name!)}`)
    const file = join(failures, name!)
    expect(readFailureFile(file)).toMatchObject({ kind: 'row', row: 'v-2', seed: 5, urls: { modelserver: modelServer.url }, machine: { machine: 'broken' } })

    const again = await cli(['--replay', file])
    expect(again.code).toBe(1)
    expect(again.stdout).toMatch(/✓ broken v-1[\s\S]*✗ broken v-2[\s\S]*reproduced: row v-2 fails again/)

    // the same file with the row's expectation met: the replay passes
    const failure = JSON.parse(readFileSync(file, 'utf8'))
    failure.machine.rows[1].expect.status = 200
    writeFileSync(file, JSON.stringify(failure))
    const fixed = await cli(['--replay', file])
    expect(fixed.code, fixed.stdout).toBe(0)
    expect(fixed.stdout).toMatch(/not reproduced: row v-2 passes now/)
  }, 120_000)

  it('refuses a file that is not a failure file', async () => {
    const bogus = join(dir, 'bogus.json')
    writeFileSync(bogus, '{"hello":1}')
    const r = await cli(['--replay', bogus])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/--replay: .* is not a conformance failure file/)
  })
})
