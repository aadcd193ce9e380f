/**
 * The minimal production start of docs/configuration.md, read from the document so that it cannot drift: it names
 * no devnet address, every setting in it is needed (without any one the start is refused, naming it), and the
 * gateway started from it — in the production profile, `SERVICE_PROFILE` unset — comes up with every capability
 * up. Its URLs and placeholders are replaced by local peers that speak the same protocols (the devnet's, on free
 * ports, and a model server that checks the API key); nothing else of the example is changed.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { once } from 'node:events'
import { randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Devnet, startDevnet } from '../../devnet/startDevnet.js'
import { nodeArgsFor } from '../../scripts/nodeArgsFor.js'
import { missingProductionSettings } from '../../src/config/profile.js'
import { type SwitchableModelServer, startSwitchableModelServer } from '../support/switchableModelServer.js'
import { waitFor } from '../support/waitFor.js'

const root = join(import.meta.dirname, '..', '..')

/** The `NAME=value` lines of the shell block under "A minimal production start". */
function exampleFromDoc(): Map<string, string> {
  const doc = readFileSync(join(root, 'docs/configuration.md'), 'utf8')
  const section = doc.slice(doc.indexOf('## A minimal production start'))
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1]
  if (!block) throw new Error('docs/configuration.md has no sh block under "A minimal production start"')
  const lines = block.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#'))
  return new Map(lines.map((l) => /^([A-Z0-9_]+)=(.*)$/.exec(l)!).map((m) => [m[1]!, m[2]!]))
}

const example = exampleFromDoc()

describe('the minimal production start of docs/configuration.md', () => {
  it('names no address of the devnet and holds nothing a production start can do without', () => {
    expect(example.size).toBeGreaterThan(3)
    for (const [name, value] of example) expect(value, name).not.toMatch(/127\.0\.0\.1|localhost|\[::1\]|:84\d\d\b|:8545\b/)
    const env = Object.fromEntries(example)
    expect(missingProductionSettings(env)).toEqual([])
    for (const name of example.keys()) {
      if (name === 'SERVICE_LLM__MODELSERVER__API_KEY') continue // the model server of compose.yaml wants it; not every model server does
      const without = Object.fromEntries([...example].filter(([n]) => n !== name))
      expect(missingProductionSettings(without).map((m) => m.name), `without ${name}`).toContain(name)
    }
  })

  describe('started', () => {
    let devnet: Devnet
    let modelServer: SwitchableModelServer
    let gateway: ChildProcess | undefined
    let output = ''
    const dirs: string[] = []
    const modelServerKey = randomBytes(32).toString('hex')

    beforeAll(async () => {
      const devnetDir = mkdtempSync(join(tmpdir(), 'prod-example-devnet-'))
      dirs.push(devnetDir)
      ;[devnet, modelServer] = await Promise.all([startDevnet({ dataDir: devnetDir, ports: 'free', deployContracts: false }), startSwitchableModelServer({ apiKey: modelServerKey })])
    }, 180_000)

    afterAll(async () => {
      if (gateway && gateway.exitCode === null && gateway.signalCode === null) {
        const closed = once(gateway, 'close')
        gateway.kill('SIGTERM')
        await closed
      }
      await modelServer?.close()
      await devnet?.close()
      for (const d of dirs) rmSync(d, { recursive: true, force: true })
    })

    it('starts in the production profile, GET /health/ready reports every capability up, paid storage quotes a price; without its upstream it is not ready', async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'prod-example-data-'))
      dirs.push(dataDir)
      const peers = devnet.info.env
      // The local stand-in of each value of the example that is an address or a placeholder.
      const local: Record<string, string | undefined> = {
        ...peers,
        SERVICE_DATA_DIR: dataDir,
        SERVICE_LLM__MODELSERVER__BASE_URL: modelServer.url,
        SERVICE_LLM__MODELSERVER__API_KEY: modelServerKey,
      }
      const env: Record<string, string> = {}
      for (const [name, value] of example) {
        // the public origin is kept as written: it is only named in messages, never called
        const replaced = name !== 'SERVICE_PUBLIC_ORIGIN' && /^(https?:\/\/|<|\/)/.test(value) ? local[name] : value
        expect(replaced, `a local stand-in for ${name}=${value}`).toBeDefined()
        env[name] = replaced!
      }
      expect(env.SERVICE_PUBLIC_ORIGIN).toBe(example.get('SERVICE_PUBLIC_ORIGIN')) // kept: only messages name it
      // Where the devnet's peers differ from the public services: its token contracts, its Algorand node's token,
      // its Arweave key (funded in its upstream) at the path the example leaves to its default — put there once the
      // gateway has shown that it is not ready without it.
      const devnetOnly = {
        SERVICE_X402__ASSET__EIP155_8453: peers.SERVICE_X402__ASSET__EIP155_8453!,
        SERVICE_X402__ASSET__EIP155_1: peers.SERVICE_X402__ASSET__EIP155_1!,
        SERVICE_ALGOD__TOKEN: peers.SERVICE_ALGOD__TOKEN!,
      }
      const bare = Object.fromEntries(Object.entries(process.env).filter(([n]) => !/^(SERVICE_|SHADOW_|FACILITATOR_|MODELSERVER_|DEVNET_)/.test(n)))
      gateway = spawn(process.execPath, nodeArgsFor('src/main.ts'), {
        cwd: root,
        env: { ...bare, ...env, ...devnetOnly, SERVICE_HOST: '127.0.0.1', SERVICE_PORT: '0', SERVICE_HEALTH__CHECK_INTERVAL_MS: '250', SERVICE_HTTP__RESPONSE_VALIDATION: 'error', LOG_LEVEL: 'info' },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      gateway.stdout!.on('data', (c) => (output += c))
      gateway.stderr!.on('data', (c) => (output += c))
      const port = await waitFor('the listening line', async () => {
        if (gateway!.exitCode !== null) throw new Error(`the gateway exited ${gateway!.exitCode}:\n${output}`)
        const m = /gateway listening on http:\/\/localhost:(\d+)/.exec(output)
        return m ? Number(m[1]) : undefined
      }, 90_000)
      expect(output).toMatch(/"profile":"production"/)
      const url = `http://127.0.0.1:${port}`
      // Without the key every upload is signed with, storage is down: not ready (it took payments it then answered
      // 502 for); the key in place, ready.
      const keyless = await waitFor('storage seen down without its key', async () => {
        const res = await fetch(`${url}/health/ready`)
        const body = (await res.json()) as { capabilities: Record<string, string> }
        return res.status === 503 && body.capabilities.storage === 'down' ? body : undefined
      }, 30_000)
      expect(keyless.capabilities).toMatchObject({ storage: 'down', facilitator: 'up', algorand: 'up' })
      copyFileSync(peers.SERVICE_STORAGE__ARWEAVE_JWK_PATH!, join(dataDir, 'arweave-jwk.json'))
      const ready = await waitFor('ready', async () => {
        const res = await fetch(`${url}/health/ready`)
        return res.status === 200 ? res.json() : undefined
      }, 30_000, async () => (await fetch(`${url}/health/ready`)).json())
      expect(ready).toEqual({
        status: 'ready',
        capabilities: { database: 'up', catalogue_log: 'up', modelserver: 'up', storage: 'up', facilitator: 'up', algorand: 'up', chains: 'not_configured' },
      })
      expect(modelServer.authorizations).toContain(`Bearer ${modelServerKey}`)
      const quote = await fetch(`${url}/store/quote?bytes=1000`)
      expect(quote.status, await quote.clone().text()).toBe(200)
      // the storage upstream goes away: not ready, storage named, the payment side still up; back, ready again
      await devnet.stopUpstream()
      const down = await waitFor('storage seen down', async () => {
        const res = await fetch(`${url}/health/ready`)
        return res.status === 503 ? res.json() : undefined
      }, 30_000)
      expect(down).toMatchObject({ status: 'not_ready', capabilities: { storage: 'down', facilitator: 'up', algorand: 'up', modelserver: 'up' } })
      await devnet.startUpstream()
      await waitFor('ready again', async () => ((await fetch(`${url}/health/ready`)).status === 200 ? true : undefined), 30_000)
      // no error but the start's credit check that could not read the key before it was put in place
      expect(output.split('\n').filter((line) => line.includes('"level":50') && !line.includes('arweave-jwk.json'))).toEqual([])
    }, 180_000)
  })
})
