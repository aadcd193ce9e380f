/**
 * HAProxy with deploy/haproxy.cfg (its addresses pointed at two local gateway processes) against the readiness of
 * the gateways, each with a model server of its own that the test turns off:
 * - one replica's model server down: that replica leaves the pool, the other serves everything;
 * - both down (a dependency every replica shares): both serve again — through the fallback backend, not a 503 for
 *   everyone — and a model route answers its own 502.
 */
import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HAPROXY, type Haproxy, runHaproxy } from '../../scripts/soak/haproxy.js'
import { freePort } from '../browser/support/spawnSystem.js'
import { spawnGateway, type SpawnedGateway } from '../support/spawnGateway.js'
import { type SwitchableModelServer, startSwitchableModelServer } from '../support/switchableModelServer.js'
import { waitFor } from '../support/waitFor.js'
import { walletLogin } from '../support/walletLogin.js'

const root = join(import.meta.dirname, '..', '..')
let dir: string
const modelServers: SwitchableModelServer[] = []
const gateways: SpawnedGateway[] = []
let lb: Haproxy
let front: number

/** deploy/haproxy.cfg with compose's service names replaced by the local gateways (and no DNS resolvers). */
function deployedConfig(ports: number[], frontPort: number): string {
  let cfg = readFileSync(join(root, 'deploy/haproxy.cfg'), 'utf8')
    .replace(/^resolvers compose\n(?: {2}.*\n)+/m, '')
    .replaceAll(' resolvers compose init-addr last,libc,none', '')
    .replace(/^ {2}bind :8000$/m, `  bind 127.0.0.1:${frontPort}`)
  ports.forEach((port, i) => (cfg = cfg.replaceAll(`gateway-${i + 1}:8000`, `127.0.0.1:${port}`)))
  if (/gateway-\d:8000|resolvers|bind :8000/.test(cfg)) throw new Error(`deploy/haproxy.cfg changed shape:\n${cfg}`)
  return cfg
}

/** How many `GET /health` each gateway has answered (its own `/metrics`, read on loopback). */
async function healthCounts(): Promise<number[]> {
  return Promise.all(
    gateways.map(async (g) => {
      const text = await (await fetch(`${g.url}/metrics`)).text()
      return [...text.matchAll(/^http_requests_total\{operation="getHealth",method="GET",status="200"\} (\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0)
    }),
  )
}

/** Sends `n` requests through HAProxy; their statuses, and how many each gateway answered. */
async function through(n: number): Promise<{ statuses: number[]; served: number[] }> {
  const before = await healthCounts()
  const statuses: number[] = []
  for (let i = 0; i < n; i++) statuses.push((await fetch(`http://127.0.0.1:${front}/health`)).status)
  const after = await healthCounts()
  return { statuses, served: after.map((c, i) => c - before[i]!) }
}

const readyStatus = async (g: SpawnedGateway) => (await fetch(`${g.url}/health/ready`)).status

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'haproxy-ready-'))
  modelServers.push(await startSwitchableModelServer(), await startSwitchableModelServer())
  gateways.push(
    ...(await Promise.all(
      modelServers.map((ms, i) =>
        spawnGateway({
          SERVICE_DATA_DIR: join(dir, `gw-${i}`),
          SERVICE_LLM__MODELSERVER__BASE_URL: ms.url,
          SERVICE_HEALTH__CHECK_INTERVAL_MS: '200',
          SERVICE_RATE_LIMIT__MAX: '100000',
          SERVICE_HTTP__RESPONSE_VALIDATION: 'error',
        }),
      ),
    )),
  )
  front = await freePort()
  lb = await runHaproxy(dir, front, deployedConfig(gateways.map((g) => g.port), front))
}, 180_000)

afterAll(async () => {
  await lb?.close()
  await Promise.allSettled(gateways.map((g) => g.stop()))
  await Promise.allSettled(modelServers.map((m) => m.close()))
  if (dir) await rm(dir, { recursive: true, force: true })
})

describe.skipIf(!existsSync(HAPROXY))('HAProxy (deploy/haproxy.cfg) and GET /health/ready', () => {
  it('balances over both replicas while every capability is up', async () => {
    await waitFor('both replicas ready', async () => ((await Promise.all(gateways.map(readyStatus))).every((s) => s === 200) ? true : undefined), 30_000)
    const { statuses, served } = await waitFor('HAProxy sending to both', async () => {
      const r = await through(20)
      return r.served.every((n) => n > 0) ? r : undefined
    }, 30_000)
    expect(statuses.every((s) => s === 200)).toBe(true)
    expect(served.reduce((a, b) => a + b)).toBe(20)
  })

  it("takes out the replica whose model server is down while the other's is up", async () => {
    modelServers[0]!.up = false
    await waitFor('replica 1 not ready', async () => ((await readyStatus(gateways[0]!)) === 503 ? true : undefined), 30_000)
    const { statuses, served } = await waitFor('HAProxy sending to replica 2 only', async () => {
      const r = await through(20)
      return r.served[0] === 0 ? r : undefined
    }, 30_000)
    expect(statuses.every((s) => s === 200)).toBe(true)
    expect(served).toEqual([0, 20])
  })

  it('keeps both serving when the model servers of both are down, and the model routes answer their own 502', async () => {
    modelServers[1]!.up = false
    await waitFor('replica 2 not ready', async () => ((await readyStatus(gateways[1]!)) === 503 ? true : undefined), 30_000)
    const { statuses, served } = await waitFor('HAProxy on the fallback, sending to both', async () => {
      const r = await through(20)
      return r.served.every((n) => n > 0) ? r : undefined
    }, 30_000)
    expect(statuses.every((s) => s === 200), `statuses ${statuses.join(',')}`).toBe(true)
    expect(served.reduce((a, b) => a + b)).toBe(20)
    // a model route, signed in (on one replica: each has its own database here), answers its own 502
    const token = await walletLogin(gateways[0]!.url, privateKeyToAccount(generatePrivateKey()))
    const models = await fetch(`${gateways[0]!.url}/llm/v1/models`, { headers: { authorization: `Bearer ${token}` } })
    expect(models.status).toBe(502)
    expect(lb.log().filter((l) => l.includes('<NOSRV>'))).toEqual([])
  })
})
