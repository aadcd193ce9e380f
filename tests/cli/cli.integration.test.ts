/**
 * The `pay2store` CLI against `npm start`-style peers on free ports: the devnet (chains, facilitator,
 * upstream, Arweave gateway), the real gateway app, and two model servers (one serving the registry side).
 * Commands run in-process through `main(argv)` with stdout/stderr captured (exit code returned), and once
 * through `bin/pay2store.mjs` in a pseudo-terminal (`script -qfc`, util-linux) to see the progress bars.
 */
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilAccount } from '../../devnet/accounts.js'
import { EXIT } from '../../src/cli/CliError.js'
import { createEngine } from '../../src/modelserver/engine/createEngine.js'
import type { Engine } from '../../src/modelserver/engine/Engine.js'
import { startTestModelServer, type TestModelServer } from '../support/startTestModelServer.js'
import { evmEnv, type EvmPeers, startAppGateway, startEvmPeers, type TestGateway } from '../storage/harness.js'
import { runCliInProcess } from '../support/runCliInProcess.js'
import { runInTerminal } from '../support/runInTerminal.js'
import { writeTestModels } from '../support/writeTestModels.js'

let peers: EvmPeers
let gw: TestGateway
let engine: Engine
let registry: TestModelServer
let local: TestModelServer
let dir: string
/** A gateway that reads at most 64 KiB of a request without a payment: it answers 413 before a larger upload is sent. */
let small: TestGateway
const KEY_ENV = 'PAY2STORE_TEST_KEY'
const DOWN = 'http://127.0.0.1:1'

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cli-it-'))
  peers = await startEvmPeers()
  const env = evmEnv(peers)
  delete env.SERVICE_X402__ASSET__EIP155_8453
  delete env.SERVICE_X402__ASSET__EIP155_1
  gw = await startAppGateway(env, peers.dir, { withBatch: true }) // receipts come from the batch domain
  small = await startAppGateway({ ...env, SERVICE_STORAGE__UNPAID_MAX_BYTES: String(64 * 1024), SERVICE_STORAGE__MAX_UPLOAD_BYTES: String(8_000_000) }, peers.dir)
  engine = await createEngine({ threads: 1 })
  registry = await startTestModelServer({ engine })
  local = await startTestModelServer({ engine, config: { installDefaults: false, registries: [`127.0.0.1:${registry.port}`, 'registry.ollama.ai'] } })
}, 180_000)
afterAll(async () => {
  await local?.close()
  await registry?.close()
  await engine?.dispose()
  await small?.close()
  await gw?.close()
  await peers?.close()
  await rm(dir, { recursive: true, force: true })
})

const cli = runCliInProcess

const payer = (i: number) => ({ [KEY_ENV]: anvilAccount(i).privateKey })
let stored: string

describe('pay2store store / receipt / verify / login', () => {
  it('store pays on each EVM rail and prints the receipt and the Arweave link', async () => {
    const file = join(dir, 'hello.bin')
    await writeFile(file, randomBytes(150_000))
    for (const rail of ['base', 'ethereum']) {
      const r = await cli(['store', file, '--gateway', gw.url, '--rail', rail, '--key-env', KEY_ENV, '--arweave', peers.arweave.url, '--json'], payer(2))
      expect(r.code, r.out + r.err).toBe(EXIT.ok)
      expect(r.json).toMatchObject({ sizeBytes: 150_000, network: rail === 'base' ? 'eip155:8453' : 'eip155:1', payer: anvilAccount(2).address })
      expect(r.json.arweaveUrl).toBe(`${peers.arweave.url}/${r.json.arTxId}`)
      stored = r.json.arTxId
    }
    const human = await cli(['store', file, '--gateway', gw.url, '--key-env', KEY_ENV, '--arweave', peers.arweave.url], payer(3))
    expect(human.code).toBe(EXIT.ok)
    expect(human.out).toMatch(/^paying 0\.\d+ USDC on base from 0x/)
    // the id under the name `receipt` and `verify` take it by, as `receipt` prints it
    expect(human.out).toMatch(new RegExp(`\nstored ${file} \\(150000 bytes\\)\nstorage id   [A-Za-z0-9_-]{43}\n`))
    expect(human.out).toContain(`\nlink         ${peers.arweave.url}/`)
    expect(human.out).toMatch(/\npaid         0\.\d+ USDC on eip155:8453\npayer        0x[0-9a-fA-F]{40}\n/)
  })

  it('store failures: bad file, no key, server down, insufficient funds, over the spend cap', async () => {
    const empty = join(dir, 'empty.bin')
    await writeFile(empty, '')
    const file = join(dir, 'small.bin')
    await writeFile(file, randomBytes(200_000))
    const args = ['--gateway', gw.url, '--key-env', KEY_ENV]
    const missing = await cli(['store', join(dir, 'missing.bin'), ...args], payer(2))
    expect(missing.code).toBe(EXIT.usage)
    expect(missing.err).toContain(`cannot read ${join(dir, 'missing.bin')}: no such file (ENOENT)`)
    const e = await cli(['store', empty, ...args], payer(2))
    expect(e.code).toBe(EXIT.usage)
    expect(e.err).toContain('is empty')
    const nokey = await cli(['store', file, '--gateway', gw.url, '--key-env', 'PAY2STORE_UNSET_KEY', '--json'])
    expect(nokey.code).toBe(EXIT.notPayable)
    expect(nokey.json).toMatchObject({ error: 'no_key' })
    const down = await cli(['store', file, '--gateway', DOWN, '--key-env', KEY_ENV, '--json'], payer(2))
    expect(down.code).toBe(EXIT.unreachable)
    expect(down.json.error).toBe('server_unreachable')
    // says what to do, not only what failed
    expect(down.json.message).toBe(`cannot reach ${DOWN}/store (connection refused) — is the gateway running? start it with \`npm start\` (or pass --gateway)`)
    const poor = await cli(['store', file, ...args, '--json'], payer(8)) // Anvil #8 holds no USDC
    expect(poor.code, poor.out).toBe(EXIT.insufficientFunds)
    expect(poor.json.error).toBe('insufficient_funds')
    const capped = await cli(['store', file, ...args, '--max-usd', '0.000001', '--json'], payer(2))
    expect(capped.code, capped.out).toBe(EXIT.notPayable)
    // in the words of the option the user set, not the client library's settings
    expect(capped.json.message).toMatch(/^cannot pay this quote: [\d.]+ USDC is above --max-usd 0\.000001$/)
    // a gateway named without its scheme: a usage error saying what is expected (it was Node's own message, exit 1)
    const schemeless = await cli(['store', file, '--gateway', 'localhost:8000'], payer(2))
    expect(schemeless.code, schemeless.err).toBe(EXIT.usage)
    expect(schemeless.err).toContain('expected an http:// or https:// URL, e.g. http://localhost:8000')
  })

  it('store in an 80-column terminal: each line fits, the price is asked without sending the file, the message comes before the one bar, which ends at 100%; at 50 columns the bar follows', async () => {
    const file = join(dir, 'terminal.bin')
    await writeFile(file, randomBytes(3_000_000))
    const command = `node bin/pay2store.mjs store ${file} --gateway ${gw.url} --key-env ${KEY_ENV} --arweave ${peers.arweave.url}`
    const { lines, code } = await runInTerminal(command, { cols: 80, cwd: process.cwd(), env: payer(5), timeoutMs: 150_000 })
    const screen = lines.join('\n')
    expect(code, screen).toBe(EXIT.ok)
    for (const line of lines) expect(line.length, `over 80 columns: ${line}`).toBeLessThanOrEqual(80)
    const barLines = lines.filter((l) => /[█░]/.test(l))
    // one line per bar, each complete (label, bar, 100%, both sizes) and nothing else on it
    // the price comes from GET /store/quote: the file is sent once, paid
    expect(barLines, screen).toEqual([expect.stringMatching(/^upload \(paid\) +\[█+\] 100% 2\.9 MB\/2\.9 MB$/)])
    const upload = lines.indexOf(barLines[0]!)
    const paying = lines.findIndex((l) => l.includes('paying'))
    expect(lines[paying], screen).toMatch(new RegExp(`^paying 0\\.\\d+ USDC on base from ${anvilAccount(5).address}$`))
    expect(paying < upload, screen).toBe(true)
    expect(lines.slice(upload + 1).join('\n'), screen).toMatch(new RegExp(`^stored ${file} \\(3000000 bytes\\)\nstorage id   [A-Za-z0-9_-]{43}\nsha256 `))

    // a narrower terminal: the bars follow its width, still whole
    const narrow = await runInTerminal(command, { cols: 50, cwd: process.cwd(), env: payer(5), timeoutMs: 150_000 })
    expect(narrow.code, narrow.lines.join('\n')).toBe(EXIT.ok)
    const narrowBars = narrow.lines.filter((l) => /[█░]/.test(l))
    expect(narrowBars, narrow.lines.join('\n')).toEqual([expect.stringMatching(/^upload \(paid\) \[█{10,}\] 100% 2\.9 MB\/2\.9 MB$/)])
    for (const line of narrowBars) expect(line.length).toBeLessThan(50)
  }, 240_000)

  it('receipt prints the receipt; an unknown id is 6, a malformed one 2', async () => {
    const r = await cli(['receipt', stored, '--gateway', gw.url, '--json'])
    expect(r.code, r.out + r.err).toBe(EXIT.ok)
    expect(r.json).toMatchObject({ ar_tx_id: stored, size_bytes: 150_000, payer: anvilAccount(2).address })
    const human = await cli(['receipt', stored, '--gateway', gw.url])
    expect(human.out).toContain(`storage id   ${stored}`)
    // one name for the id wherever a person reads it: the help of the commands that take it says `storage id` too
    for (const command of ['receipt', 'verify']) {
      const help = await cli([command, '--help'])
      expect(help.out).toMatch(new RegExp(`^Usage: pay2store ${command} \\[options\\] <storage-id>\\n`))
      expect(help.out).not.toMatch(/arTxId|ar_tx_id/)
    }
    // the amount as `store` prints it (the asset's decimals and symbol); atomic units stay in --json
    expect(human.out).toContain(`\npaid         ${Number(r.json.paid_atomics) / 1e6} USDC\nasset        0x`)
    for (const line of human.out.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80)
    expect(human.out).not.toContain('atomic units')
    expect(typeof r.json.paid_atomics).toBe('string')
    expect((await cli(['receipt', 'A'.repeat(43), '--gateway', gw.url])).code).toBe(EXIT.notFound)
    expect((await cli(['receipt', 'not-an-id', '--gateway', gw.url])).code).toBe(EXIT.usage)
    const down = await cli(['receipt', stored, '--gateway', DOWN])
    expect(down.code).toBe(EXIT.unreachable)
    expect(down.err).toMatch(/^pay2store: cannot reach http:\/\/127\.0\.0\.1:1 \(.+\) — is the gateway running\? start it with `npm start` \(or pass --gateway\)\n$/)
  })

  it('verify checks the Arweave bytes against the receipt; bytes that do not match exit 7', async () => {
    const r = await cli(['verify', stored, '--gateway', gw.url, '--arweave', peers.arweave.url, '--json'])
    expect(r.code, r.out + r.err).toBe(EXIT.ok)
    expect(r.json).toMatchObject({ arTxId: stored, bytes: 'match', sizeBytes: 150_000, proof: 'not yet batched' })
    const human = await cli(['verify', stored, '--gateway', gw.url, '--arweave', peers.arweave.url])
    expect(human.out).toMatch(/^ok: the 150000 bytes on Arweave match the receipt\nsha256   [0-9a-f]{64}\nproof    not yet batched\n$/)
    // another item's bytes under this id: a gateway serving other data
    const { createServer } = await import('node:http')
    const liar = createServer((_req, res) => res.end('other bytes'))
    await new Promise<void>((ok) => liar.listen(0, '127.0.0.1', ok))
    const port = (liar.address() as { port: number }).port
    try {
      const bad = await cli(['verify', stored, '--gateway', gw.url, '--arweave', `http://127.0.0.1:${port}`, '--json'])
      expect(bad.code).toBe(EXIT.verifyFailed)
      expect(bad.json.error).toBe('verify_failed')
    } finally {
      liar.close()
    }
  })

  it('login prints a session token the gateway accepts; a malformed key is 2', async () => {
    const r = await cli(['login', '--gateway', gw.url, '--key-env', KEY_ENV], payer(4))
    expect(r.code, r.err).toBe(EXIT.ok)
    const token = r.out.trim()
    const check = await fetch(`${gw.url}/users/session/validate`, { headers: { 'x-session-token': token } })
    expect(check.status).toBe(200)
    expect(((await check.json()) as { wallet: string }).wallet).toBe(anvilAccount(4).address)
    expect((await cli(['login', '--gateway', gw.url, '--key-env', KEY_ENV], { [KEY_ENV]: '0x1234' })).code).toBe(EXIT.usage)
    expect((await cli(['login', '--gateway', DOWN, '--key-env', KEY_ENV], payer(4))).code).toBe(EXIT.unreachable)
  })
})

describe('pay2store models', () => {
  const remote = () => `127.0.0.1:${registry.port}/library/svc-tiny-chat:latest`

  it('pull draws the progress stream; list, show, cp, run, ps, rm, push', async () => {
    const pull = await cli(['models', 'pull', remote(), '--insecure', '--host', local.url, '--json'])
    expect(pull.code, pull.out + pull.err).toBe(EXIT.ok)
    expect(pull.json.statuses[0]).toBe('pulling manifest')
    expect(pull.json.statuses.at(-1)).toBe('success')
    const layers = Object.values(pull.json.layers) as { total: number; completed: number }[]
    expect(layers.length).toBeGreaterThan(0)
    for (const l of layers) expect(l.completed).toBe(l.total)
    // for a person: each status once (`success` the stream's last), then what was done
    const human = await cli(['models', 'pull', remote(), '--insecure', '--host', local.url])
    expect(human.code, human.out + human.err).toBe(EXIT.ok)
    expect(human.out.split('\n').filter((l) => l.trim() === 'success')).toHaveLength(1)
    expect(human.out.trimEnd().endsWith(`success\npulled '${remote()}'`)).toBe(true)

    const list = await cli(['models', 'list', '--host', local.url])
    expect(list.code).toBe(EXIT.ok)
    expect(list.out.split('\n')[0]).toMatch(/^NAME\s+ID\s+SIZE\s+MODIFIED$/)
    expect(list.out).toContain(remote())
    const show = await cli(['models', 'show', remote(), '--host', local.url, '--json'])
    expect(show.code).toBe(EXIT.ok)
    expect(show.json.details).toBeDefined()

    expect((await cli(['models', 'cp', remote(), 'mine:v1', '--host', local.url])).out).toBe(`copied '${remote()}' to 'mine:v1'\n`)
    const run = await cli(['models', 'run', 'mine:v1', 'say', 'hi', '--seed', '1', '--num-predict', '4', '--host', local.url, '--json'])
    expect(run.code, run.out + run.err).toBe(EXIT.ok)
    expect(typeof run.json.content).toBe('string')
    expect(run.json.final.done).toBe(true)
    const ps = await cli(['models', 'ps', '--host', local.url, '--json'])
    expect(ps.json.models.map((m: { name: string }) => m.name)).toContain('mine:v1')

    const target = `127.0.0.1:${registry.port}/library/pushed-by-cli:v1`
    await cli(['models', 'cp', 'mine:v1', target, '--host', local.url])
    const push = await cli(['models', 'push', target, '--insecure', '--host', local.url, '--json'])
    expect(push.code, push.out + push.err).toBe(EXIT.ok)
    expect(push.json.statuses.at(-1)).toBe('success')
    expect((await cli(['models', 'list', '--host', registry.url])).out).toContain('pushed-by-cli:v1')

    expect((await cli(['models', 'rm', 'mine:v1', '--host', local.url])).code).toBe(EXIT.ok)
    expect((await cli(['models', 'list', '--host', local.url])).out).not.toContain('mine:v1')
  })

  it('says the built-in models are test models with random weights: list, show and run', async () => {
    const list = await cli(['models', 'list', '--host', registry.url])
    expect(list.code).toBe(EXIT.ok)
    const note = list.out.slice(list.out.indexOf('\n\ntest models with random weights (their output is gibberish, by design):'))
    expect(note.length, list.out).toBeLessThan(list.out.length)
    for (const name of ['svc-tiny-chat:latest', 'svc-tiny-embed:latest']) expect(note).toContain(name)
    expect(note).toContain('`pay2store models create NAME --from FILE.gguf`')
    for (const line of list.out.split('\n')) expect(line.length).toBeLessThanOrEqual(80)
    const show = await cli(['models', 'show', 'svc-tiny-chat', '--host', registry.url])
    expect(show.out).toMatch(/^ {2}Note\n {4}Test model with random weights/)
    expect((await cli(['models', 'show', 'svc-tiny-chat', '--host', registry.url, '--json'])).json.details.test_model).toBe(true)
    const run = await cli(['models', 'run', 'svc-tiny-chat', 'hello', '--num-predict', '2', '--host', registry.url])
    expect(run.code, run.err).toBe(EXIT.ok)
    expect(run.err.replace(/\s+/g, ' ')).toMatch(/^note: svc-tiny-chat is a test model with random weights; its reply is gibberish, by design\. To run a real model: /)
    for (const line of run.err.split('\n')) expect(line.length).toBeLessThanOrEqual(80)
  })

  it('create --from imports a local GGUF (blob, then create) that answers /api/generate', async () => {
    const files = writeTestModels({ imported: { seed: 0x1234_5678 } })
    const r = await cli(['models', 'create', 'imported:v1', '--from', files.imported!, '--host', local.url, '--json'])
    expect(r.code, r.out + r.err).toBe(EXIT.ok)
    expect(r.json).toMatchObject({ model: 'imported:v1', status: 'success' })
    expect(r.json.statuses).toEqual(expect.arrayContaining(['parsing GGUF', 'writing manifest', 'success']))
    const generated = await fetch(`${local.url}/api/generate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'imported:v1', prompt: 'hello', stream: false, options: { seed: 1, num_predict: 4 } }) })
    expect(generated.status).toBe(200)
    const body = (await generated.json()) as { model: string; response: string; done: boolean }
    expect(body).toMatchObject({ model: 'imported:v1', done: true })
    expect(typeof body.response).toBe('string')
    // other weights than the built-in test models: not flagged as one
    expect((await cli(['models', 'show', 'imported:v1', '--host', local.url, '--json'])).json.details.test_model).toBe(false)
    // the same file again: the blob is already there, not sent twice
    const again = await cli(['models', 'create', 'imported:v2', '--from', files.imported!, '--host', local.url])
    expect(again.code, again.err).toBe(EXIT.ok)
    expect(again.out).toMatch(/^the server has sha256:[0-9a-f]{64} already\n/)
    expect(again.out).toMatch(/created 'imported:v2'/)
    // not a GGUF: the server's 400, exit 2; no file: exit 2; server down: exit 3 with what to do
    const junk = join(dir, 'junk.gguf')
    await writeFile(junk, 'not a model at all')
    const bad = await cli(['models', 'create', 'junk:v1', '--from', junk, '--host', local.url, '--json'])
    expect(bad.code, bad.out).toBe(EXIT.usage)
    expect(bad.json.message).toMatch(/not a GGUF file/)
    expect((await cli(['models', 'create', 'x:v1', '--from', join(dir, 'missing.gguf'), '--host', local.url])).code).toBe(EXIT.usage)
    const down = await cli(['models', 'create', 'x:v1', '--from', files.imported!, '--host', DOWN])
    expect(down.code).toBe(EXIT.unreachable)
    expect(down.err).toContain('is the model server running? start it with `npm start`')
    for (const name of ['imported:v1', 'imported:v2']) await cli(['models', 'rm', name, '--host', local.url])
  })

  it('failures: unknown model is 6 for show, rm, run, cp and pull; a server down is 3; bad usage is 2', async () => {
    for (const args of [['show', 'nope:1'], ['rm', 'nope:1'], ['run', 'nope:1', 'hi'], ['cp', 'nope:1', 'other:1']]) {
      const r = await cli(['models', ...args, '--host', local.url, '--json'])
      expect(r.code, `${args.join(' ')}: ${r.out}`).toBe(EXIT.notFound)
    }
    const pull = await cli(['models', 'pull', `127.0.0.1:${registry.port}/library/nope:1`, '--insecure', '--host', local.url, '--json'])
    expect(pull.code, pull.out).toBe(EXIT.notFound)
    const push = await cli(['models', 'push', 'nope:1', '--insecure', '--host', local.url, '--json'])
    expect([EXIT.notFound, EXIT.server]).toContain(push.code)
    for (const sub of ['list', 'ps']) expect((await cli(['models', sub, '--host', DOWN])).code).toBe(EXIT.unreachable)
    expect((await cli(['models', 'show'])).code).toBe(EXIT.usage) // missing argument
    expect((await cli(['store', 'x', '--rail', 'solana'])).code).toBe(EXIT.usage)
    const help = await cli(['models', 'run', '--help'])
    expect(help.code).toBe(EXIT.ok)
  })

  it('pull in a terminal draws a bar per layer (pseudo-terminal via script)', async () => {
    const name = `127.0.0.1:${registry.port}/library/svc-tiny-embed:latest`
    const cmd = `node bin/pay2store.mjs models pull ${name} --insecure --host ${local.url}`
    const { stdout } = await promisify(execFile)('script', ['-qfec', cmd, '/dev/null'], { cwd: process.cwd(), env: { ...process.env, COLUMNS: '120' }, timeout: 120_000 })
    expect(stdout).toContain('pulling manifest')
    expect(stdout).toMatch(/pulling [0-9a-f]{12}\s+\[█+\] 100%/)
    expect(stdout).toContain('success')
  }, 150_000)
})

/**
 * Every failure in a terminal ends the command with its message and exit code, whatever bars were drawn: a
 * bar still live after its command (its redraw timer) would keep the process running after the message.
 * Each case runs `bin/pay2store.mjs` in its own 80-column terminal (tmux); a command still running after
 * 45 s fails the case with the screen as it was.
 */
describe('in a terminal, every failure ends the command with its message and exit code', () => {
  const bars = /[█░]/
  const inTerminal = async (args: string, env: Record<string, string> = {}) => {
    const r = await runInTerminal(`node bin/pay2store.mjs ${args}`, { cols: 80, cwd: process.cwd(), env, timeoutMs: 45_000 })
    return { ...r, screen: r.lines.join('\n'), last: r.lines.at(-1) ?? '' }
  }

  it('store with no gateway running (--devnet, before npm start): the message alone, no bar, exit 3', async () => {
    const file = join(dir, 'hello.txt')
    await writeFile(file, 'hello, permanent world\n')
    const devnetFile = join(dir, 'devnet-for-terminal.json')
    await writeFile(devnetFile, JSON.stringify({ accounts: { evm: [{ role: 'payer', privateKey: anvilAccount(2).privateKey }] } }))
    const r = await inTerminal(`store ${file} --devnet ${devnetFile} --gateway ${DOWN}`)
    expect(r.code, r.screen).toBe(EXIT.unreachable)
    expect(r.lines, r.screen).toEqual([`pay2store: cannot reach ${DOWN}/store (connection refused) — is the gateway running? start it with \`npm start\` (or pass --gateway)`])
  }, 60_000)

  it('store never sends a file unpaid: past a gateway\'s unpaid limit it is priced by the quote and sent once, paid (it was a 413 after an unpaid upload); above the upload limit it is refused before a byte is sent, exit 2', async () => {
    const file = join(dir, 'above-unpaid-limit.bin')
    await writeFile(file, randomBytes(6_000_000))
    const stored = await inTerminal(`store ${file} --gateway ${small.url} --key-env ${KEY_ENV} --arweave ${peers.arweave.url}`, payer(5))
    expect(stored.code, stored.screen).toBe(EXIT.ok)
    expect(stored.lines.filter((l) => bars.test(l)), stored.screen).toEqual([expect.stringMatching(/^upload \(paid\) +\[█+\] 100% /)])
    const huge = join(dir, 'above-upload-limit.bin')
    await writeFile(huge, randomBytes(9_000_000))
    const r = await inTerminal(`store ${huge} --gateway ${small.url} --key-env ${KEY_ENV}`, payer(6))
    expect(r.code, r.screen).toBe(EXIT.usage)
    expect(r.lines, r.screen).toEqual([expect.stringMatching(/^pay2store: GET \/store\/quote answered 413: file larger than the maximum/)])
  }, 90_000)

  it('store whose payment the payer cannot cover: the upload bar, then the message, exit 5', async () => {
    const file = join(dir, 'poor.bin')
    await writeFile(file, randomBytes(300_000))
    const r = await inTerminal(`store ${file} --gateway ${gw.url} --key-env ${KEY_ENV}`, payer(8)) // Anvil #8 holds no USDC
    expect(r.code, r.screen).toBe(EXIT.insufficientFunds)
    // one line, however long the server's explanation
    expect(r.last, r.screen).toMatch(/^pay2store: the payer's balance does not cover the price/)
    const barLines = r.lines.filter((l) => bars.test(l))
    expect(barLines, r.screen).toHaveLength(1)
    expect(r.lines.indexOf(barLines[0]!), r.screen).toBe(r.lines.length - 2)
  }, 60_000)

  it('models create with no model server: the hashing bar, then the message, exit 3', async () => {
    const files = writeTestModels()
    const r = await inTerminal(`models create x:v1 --from ${files.chat} --host ${DOWN}`)
    expect(r.code, r.screen).toBe(EXIT.unreachable)
    expect(r.last, r.screen).toMatch(/^pay2store: cannot reach .* — is the model server running\? start it with `npm start`/)
  }, 60_000)

  it('models pull of a model the registry does not have: the statuses, then the message, exit 6; no model server: exit 3', async () => {
    const missing = await inTerminal(`models pull 127.0.0.1:${registry.port}/library/nope:1 --insecure --host ${local.url}`)
    expect(missing.code, missing.screen).toBe(EXIT.notFound)
    expect(missing.last, missing.screen).toMatch(/^pay2store: pull 127\.0\.0\.1:\d+\/library\/nope:1: /)
    const down = await inTerminal(`models pull svc-tiny-chat --host ${DOWN}`)
    expect(down.code, down.screen).toBe(EXIT.unreachable)
    expect(down.lines, down.screen).toEqual([expect.stringMatching(/^pay2store: cannot reach http:\/\/127\.0\.0\.1:1 /)])
  }, 120_000)
})
