/**
 * The production install (issue 30): what the Containerfile's final stage holds, made in a temporary folder
 * outside the repository and started from there.
 * - The files are the ones the final stage COPYs from the build context (read from the Containerfile), the
 *   compiled `dist/` (`tsc -p tsconfig.build.json`, the build stage's `npm run build`; the tree's own `dist/` when
 *   it is newer than every source) and
 *   `npm ci --omit=dev` (the deps stage).
 * - better-sqlite3's native build: `npm ci` compiles it from source here (no prebuilt binary can be
 *   downloaded), minutes on the shared 2-core machine, so the install runs with `--ignore-scripts` and takes
 *   the build of this tree's better-sqlite3 when it is the same version for the same Node; otherwise, or with
 *   PRODUCTION_INSTALL_COMPILE=1, it runs better-sqlite3's own install script (`npm rebuild better-sqlite3`);
 *   PRODUCTION_INSTALL_BUILT_FROM=<folder> takes the build from another tree of the same version.
 *   No other production package has an install script that runs (package.json `allowScripts`).
 * - node_modules ≤ 300 MB of files (`du --apparent-size`), and no test tool in it.
 * - The gateway starts with the Containerfile's CMD (= `npm run serve`), answers /health (its responses are
 *   validated against the document: SERVICE_HTTP__RESPONSE_VALIDATION=error), and the image's health check
 *   (deploy/healthcheck.mjs) passes, and fails once the gateway is gone. The model server starts from the same
 *   install (compose.yaml's command) and its health check passes with its API key.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
// Trees are copied and removed off the event loop: a synchronous copy or removal of a production node_modules held
// this fork's loop for 28.6 s on a loaded machine, and a worker whose loop is held past 60 s fails vitest's own calls.
import { cp, rm } from 'node:fs/promises'
import { randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { containerfileStages } from './containerfileStages.js'
import { buildIsFresh } from '../../scripts/nodeArgsFor.js'

const run = promisify(execFile)
const root = resolve(import.meta.dirname, '../..')
const MAX_NODE_MODULES_BYTES = 300_000_000

let dir: string
let installSeconds = 0
const children: ChildProcess[] = []

function finalStageCommand(): string[] {
  const final = containerfileStages(readFileSync(join(root, 'Containerfile'), 'utf8')).at(-1)!
  const cmd = final.instructions.find((i) => i.keyword === 'CMD')!
  return JSON.parse(cmd.args) as string[]
}

async function healthcheck(env: Record<string, string>): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['deploy/healthcheck.mjs'], { cwd: dir, env: { PATH: process.env.PATH!, HEALTH_TIMEOUT_MS: '30000', ...env } })
    return { code: 0, output: stdout + stderr }
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string }
    return { code: err.code, output: err.stdout + err.stderr }
  }
}

/** Starts `argv` in the install, resolves with the port its listening line names. */
async function startFromInstall(argv: string[], env: Record<string, string>, listening: RegExp): Promise<{ child: ChildProcess; port: number; output: () => string }> {
  const [command, ...args] = argv
  const child = spawn(command === 'node' ? process.execPath : command!, args, {
    cwd: dir,
    // only what an operator sets: no variable of this test process leaks in (NODE_OPTIONS, tsx loaders…)
    env: { PATH: process.env.PATH!, HOME: dir, NODE_ENV: 'production', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.push(child)
  let output = ''
  const port = await new Promise<number>((resolvePort, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const m = listening.exec(output)
      if (m) resolvePort(Number(m[1]))
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    child.once('exit', (code) => reject(new Error(`${argv.join(' ')} exited ${code} before listening:\n${output.slice(-3000)}`)))
  })
  return { child, port, output: () => output }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((r) => child.once('exit', r))
  child.kill('SIGTERM')
  const t = setTimeout(() => child.kill('SIGKILL'), 15_000)
  await exited
  clearTimeout(t)
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'prod-install-'))
  // What the final stage copies from the build context, and what `npm ci` reads.
  const final = containerfileStages(readFileSync(join(root, 'Containerfile'), 'utf8')).at(-1)!
  const sources = final.instructions
    .filter((i) => i.keyword === 'COPY' && !i.args.startsWith('--from'))
    .flatMap((i) => i.args.split(/\s+/).slice(0, -1))
  for (const source of ['package.json', 'package-lock.json', 'overrides', ...sources]) {
    mkdirSync(dirname(join(dir, source)), { recursive: true })
    await cp(join(root, source), join(dir, source), { recursive: true })
  }
  const t0 = Date.now()
  await run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, maxBuffer: 16 << 20 })
  installSeconds = (Date.now() - t0) / 1000
  const version = (p: string) => (JSON.parse(readFileSync(join(p, 'node_modules/better-sqlite3/package.json'), 'utf8')) as { version: string }).version
  // PRODUCTION_INSTALL_BUILT_FROM: another tree whose better-sqlite3 is built for this Node (default: this one)
  const from = process.env.PRODUCTION_INSTALL_BUILT_FROM ?? root
  const ownBuild = join(from, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node')
  if (process.env.PRODUCTION_INSTALL_COMPILE !== '1' && existsSync(ownBuild) && version(from) === version(dir)) {
    await cp(join(from, 'node_modules/better-sqlite3/build'), join(dir, 'node_modules/better-sqlite3/build'), { recursive: true })
  } else {
    await run('npm', ['rebuild', 'better-sqlite3', '--foreground-scripts', '--loglevel=error'], { cwd: dir, maxBuffer: 64 << 20 })
  }
  // what the image's deps stage removes after the install (build leftovers)
  await run(process.execPath, [join(root, 'deploy/pruneProductionInstall.mjs'), dir])
  // the build stage: the compiled gateway and model server. `npm test` has just made it (`npm run build` among its
  // static steps); taken when it is newer than every source (scripts/nodeArgsFor.ts), compiled here otherwise.
  if (buildIsFresh(root)) await cp(join(root, 'dist'), join(dir, 'dist'), { recursive: true })
  else await run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json'), '--outDir', join(dir, 'dist')], { cwd: root })
  mkdirSync(join(dir, 'data'))
}, 900_000)

afterAll(async () => {
  await Promise.all(children.map(stop))
  if (dir) await rm(dir, { recursive: true, force: true })
})

describe('the production install', () => {
  it(`keeps node_modules under ${MAX_NODE_MODULES_BYTES / 1e6} MB of files, without test tools`, async () => {
    // The files' contents (what an image layer holds); on disk with 4 KiB blocks it is ~25% more (docs/install.md).
    const size = async (...flags: string[]) => Number((await run('du', ['-sk', ...flags, join(dir, 'node_modules')])).stdout.split(/\s/)[0]) * 1024
    const bytes = await size('--apparent-size')
    console.log(`production node_modules: ${(bytes / 1e6).toFixed(1)} MB of files, ${((await size()) / 1e6).toFixed(1)} MB on disk (npm ci --omit=dev --ignore-scripts: ${installSeconds.toFixed(0)} s)`)
    expect(bytes).toBeLessThanOrEqual(MAX_NODE_MODULES_BYTES)
    for (const devOnly of ['typescript', 'vitest', 'tsx', '@foundry-rs/anvil', '@foundry-rs/anvil-linux-amd64', '@stoplight/prism-cli', 'playwright-core', 'solc', 'dockerfile-utils']) {
      expect(existsSync(join(dir, 'node_modules', devOnly)), devOnly).toBe(false)
    }
    // node-llama-cpp's CPU build only, not its GPU variants (scripts/lock-platforms.mjs)
    expect(existsSync(join(dir, 'node_modules/@node-llama-cpp/linux-x64-cuda'))).toBe(false)
  })

  it("starts the compiled gateway with the image's command; /health and the image's health check answer", async () => {
    const cmd = finalStageCommand()
    const serve = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.serve
    expect(cmd.join(' ')).toBe(serve) // the image runs what `npm run serve` runs
    const gateway = await startFromInstall(
      cmd,
      {
        SERVICE_HOST: '127.0.0.1',
        SERVICE_PORT: '0',
        SERVICE_DATA_DIR: join(dir, 'data'),
        // what a production start needs (src/config/profile.ts); the model server need not answer for /health
        SERVICE_PUBLIC_ORIGIN: 'https://store.example.com',
        SERVICE_LLM__MODELSERVER__BASE_URL: 'http://127.0.0.1:9',
        SERVICE_HTTP__RESPONSE_VALIDATION: 'error',
      },
      /gateway listening on http:\/\/localhost:(\d+)/,
    )
    const res = await fetch(`http://127.0.0.1:${gateway.port}/health`)
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ status: expect.any(String) })
    const docs = await fetch(`http://127.0.0.1:${gateway.port}/doc/openapi/gateway.yaml`)
    expect(docs.status).toBe(200)
    expect(await healthcheck({ SERVICE_PORT: String(gateway.port) })).toEqual({ code: 0, output: '' })
    await stop(gateway.child)
    const down = await healthcheck({ SERVICE_PORT: String(gateway.port) })
    expect(down.code).toBe(1)
    expect(down.output).toMatch(/^unhealthy: http:\/\/127\.0\.0\.1:\d+\/health: /)
  }, 120_000)

  it("starts the compiled model server (compose.yaml's command); its health check passes with the API key", async () => {
    const key = randomBytes(32).toString('hex') // a patterned key is refused at start (issue 27)
    const keyFile = join(dir, 'data', 'modelserver-keys')
    writeFileSync(keyFile, `${key}\n`)
    const modelserver = await startFromInstall(
      ['node', 'dist/src/modelserver/main.js'],
      { MODELSERVER_HOST: '127.0.0.1', MODELSERVER_PORT: '0', MODELSERVER_THREADS: '1', SERVICE_DATA_DIR: join(dir, 'data'), MODELSERVER_API_KEYS_FILE: keyFile },
      /"port":(\d+)[^\n]*model server listening/,
    )
    const url = `http://127.0.0.1:${modelserver.port}/api/version`
    expect(await healthcheck({ HEALTH_URL: url, HEALTH_BEARER: key })).toEqual({ code: 0, output: '' })
    const refused = await healthcheck({ HEALTH_URL: url })
    expect(refused).toEqual({ code: 1, output: `unhealthy: ${url} answered 401\n` })
    await stop(modelserver.child)
  }, 120_000)
})
