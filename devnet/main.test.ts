/**
 * `npm run devnet` as a user runs it: every peer answers, devnet.json describes them, and SIGINT / SIGTERM /
 * even SIGKILL of the devnet process leave no process behind (Anvil included). Free ports throughout.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { DevnetInfo } from './startDevnet.js'
import { alive, commandOf, descendants, waitGone } from './testing/processTree.js'

const root = resolve(import.meta.dirname, '..')
const dirs: string[] = []
const started: ChildProcess[] = []
afterAll(() => {
  for (const c of started) if (c.pid && alive(c.pid)) c.kill('SIGKILL')
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

async function launch(viaNpm: boolean, dataDir: string): Promise<{ proc: ChildProcess; info: DevnetInfo; out: () => string }> {
  const env = { ...process.env, SERVICE_DATA_DIR: dataDir, DEVNET_FREE_PORTS: '1' }
  const proc = viaNpm
    ? spawn('npm', ['run', '--silent', 'devnet'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
    : spawn(process.execPath, ['--import', 'tsx', 'devnet/main.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
  started.push(proc)
  let out = ''
  proc.stdout?.on('data', (c: Buffer) => (out += c.toString()))
  proc.stderr?.on('data', (c: Buffer) => (out += c.toString()))
  const deadline = Date.now() + 60_000
  while (!/devnet.json; up in \d+ ms/.test(out)) {
    if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`devnet did not start:\n${out}`)
    await new Promise((r) => setTimeout(r, 100))
  }
  const info = JSON.parse(readFileSync(join(dataDir, 'devnet.json'), 'utf8')) as DevnetInfo
  return { proc, info, out: () => out }
}

const isAnvil = (pid: number) => /^\S*anvil-linux-amd64\/bin\/anvil /.test(commandOf(pid))

const exited = (p: ChildProcess) =>
  p.exitCode !== null || p.signalCode !== null
    ? Promise.resolve(p.exitCode)
    : new Promise<number | null>((r) => p.once('exit', (code) => r(code)))

describe('npm run devnet', () => {
  it('starts every peer, writes devnet.json, and SIGTERM stops everything', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'devnet-main-'))
    dirs.push(dataDir)
    const { proc, info, out } = await launch(false, dataDir)
    const tree = descendants(proc.pid as number)
    const anvils = tree.filter(isAnvil)
    expect(anvils).toHaveLength(2)

    for (const [net, c] of Object.entries(info.chains)) {
      const r = (await (await fetch(c.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }) })).json()) as { result: string }
      expect(`eip155:${Number(r.result)}`).toBe(net)
    }
    const sup = await fetch(`${info.facilitator.url}/supported`, { headers: { authorization: `Bearer ${info.facilitator.token}` } })
    expect(sup.status).toBe(200)
    expect((await fetch(`${info.facilitator.url}/supported`)).status).toBe(401)
    const bal = (await (await fetch(`${info.storage.paymentUrl}/v1/balance/${info.service.arweaveAddress}`)).json()) as { winc: string }
    expect(BigInt(bal.winc)).toBeGreaterThan(0n)
    expect((await fetch(`${info.storage.gatewayUrl}/info`)).status).toBe(200)
    const st = await fetch(`${info.algorand.url}/v2/accounts/${info.service.payToAlgorand}/assets/31566704`, { headers: { 'X-Algo-API-Token': info.algorand.token } })
    expect(st.status).toBe(200)
    expect(info.algorand.network).toBe(`algorand:${info.algorand.genesisHash}`)
    expect(info.env.SERVICE_X402__ASSET__EIP155_8453).toBe(info.chains['eip155:8453'].usdc)
    expect(out()).toContain('algod')
    // seed 4.8's contracts, deployed by contracts/deploy.ts in the background
    const deadline = Date.now() + 60_000
    while (!/service contracts (deployed|not deployed)/.test(out()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200))
    expect(out()).toMatch(/service contracts deployed on eip155:8453/)
    const withContracts = JSON.parse(readFileSync(join(dataDir, 'devnet.json'), 'utf8')) as DevnetInfo
    expect(withContracts.contracts?.receiptBatches).toMatch(/^0x[0-9a-fA-F]{40}$/)

    proc.kill('SIGTERM')
    expect(await exited(proc)).toBe(0)
    expect(await waitGone([...tree, proc.pid as number])).toEqual([])
  })

  it('restarts on the same data dir with the same service keys; SIGKILL of the devnet still leaves no Anvil', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'devnet-main-'))
    dirs.push(dataDir)
    const first = await launch(false, dataDir)
    first.proc.kill('SIGINT')
    await exited(first.proc)
    const second = await launch(false, dataDir)
    expect(second.info.service).toEqual(first.info.service)
    expect(second.info.facilitator.token).toBe(first.info.facilitator.token)
    expect(second.info.shadow).toEqual(first.info.shadow)
    const tree = descendants(second.proc.pid as number)
    expect(tree.filter(isAnvil)).toHaveLength(2)
    second.proc.kill('SIGKILL')
    await exited(second.proc)
    expect(await waitGone(tree)).toEqual([])
  })

  it('through npm: Ctrl-C (SIGINT to the process group) stops everything', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'devnet-main-'))
    dirs.push(dataDir)
    const { proc } = await launch(true, dataDir)
    const tree = descendants(proc.pid as number)
    expect(tree.filter(isAnvil)).toHaveLength(2)
    process.kill(-(proc.pid as number), 'SIGINT')
    await exited(proc)
    expect(await waitGone(tree)).toEqual([])
  })

  it('through npm: SIGTERM to npm alone stops everything (npm\'s sh dies; the devnet notices)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'devnet-main-'))
    dirs.push(dataDir)
    const { proc } = await launch(true, dataDir)
    const tree = descendants(proc.pid as number)
    expect(tree.filter(isAnvil)).toHaveLength(2)
    proc.kill('SIGTERM')
    await exited(proc)
    expect(await waitGone(tree, 10_000)).toEqual([])
  })
})
