/**
 * What `npm start` will run and on which ports, from its environment — read before anything is started, so a
 * port that is taken or an `npm start` already running on the same data directory is said at once.
 *
 * Environment: SERVICE_DATA_DIR (default ./data), SERVICE_PORT (8000), SERVICE_HOST (0.0.0.0),
 * MODELSERVER_PORT (11434), MODELSERVER_HOST (127.0.0.1), DEVNET_PORT_OFFSET (every devnet port shifted),
 * DEVNET_FREE_PORTS=1 (the devnet on free ports), SERVICE_X402__FACILITATOR_URL (set: configured peers, no
 * devnet).
 */
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { devnetPortsFromEnv, PORT_NAMES, type DevnetPorts } from '../../devnet/ports.js'
import type { ListenedPort } from '../../src/shared/dataDirLock/dataDirLock.js'

export type StartPlan = {
  root: string
  dataDir: string
  gatewayPort: number
  modelPort: number
  /** The devnet's ports; `free`: chosen when it starts; `configured`: no devnet (SERVICE_X402__FACILITATOR_URL is set). */
  devnet: DevnetPorts | 'free' | 'configured'
  startsGateway: boolean
  startsModelServer: boolean
}

/** A port the plan listens on, where, and the setting that moves it. */
export type PlannedPort = ListenedPort & { host: string; setting: string }

export function planFromEnv(env: NodeJS.ProcessEnv, root: string): StartPlan {
  const port = (name: string, fallback: number) => {
    const raw = env[name]?.trim()
    if (!raw) return fallback
    const n = Number(raw)
    if (!Number.isInteger(n) || n < 1 || n > 65535) throw new Error(`${name} must be a port number from 1 to 65535 (got "${raw}")`)
    return n
  }
  return {
    root,
    dataDir: resolve(env.SERVICE_DATA_DIR?.trim() || join(root, 'data')),
    gatewayPort: port('SERVICE_PORT', 8000),
    modelPort: port('MODELSERVER_PORT', 11434),
    devnet: env.SERVICE_X402__FACILITATOR_URL?.trim() ? 'configured' : devnetPortsFromEnv(env),
    startsGateway: existsSync(join(root, 'src/main.ts')),
    startsModelServer: existsSync(join(root, 'src/modelserver/main.ts')),
  }
}

export function plannedPorts(plan: StartPlan, env: NodeJS.ProcessEnv): PlannedPort[] {
  const ports: PlannedPort[] = []
  if (plan.startsGateway) {
    ports.push({ port: plan.gatewayPort, service: 'the gateway', url: `http://127.0.0.1:${plan.gatewayPort}`, host: env.SERVICE_HOST?.trim() || '0.0.0.0', setting: 'SERVICE_PORT' })
  }
  if (plan.startsModelServer) {
    ports.push({ port: plan.modelPort, service: 'the model server', url: `http://127.0.0.1:${plan.modelPort}`, host: env.MODELSERVER_HOST?.trim() || '127.0.0.1', setting: 'MODELSERVER_PORT' })
  }
  if (typeof plan.devnet === 'object') {
    for (const [key, port] of Object.entries(plan.devnet) as [keyof DevnetPorts, number][]) {
      ports.push({ port, service: PORT_NAMES[key], host: '127.0.0.1', setting: 'DEVNET_PORT_OFFSET' })
    }
  }
  return ports
}
