import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../config/loadConfig.js'
import { findRepoRoot } from '../config/findRepoRoot.js'
import type { Services } from './types.js'
import { loadOpenApiDocument } from '../shared/http/index.js'
import { createCapturingLogger } from '../../tests/support/createCapturingLogger.js'
import { createServiceGraph } from './createServiceGraph.js'

declare module './types.js' {
  interface Services {
    graphTestDomain?: { started: number; closed: number }
  }
}

const dataDir = mkdtempSync(join(tmpdir(), 'gw-graph-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))
const env = { SERVICE_DATA_DIR: dataDir, SERVICE_PUBLIC_ORIGIN: 'http://gw.test' }
const document = loadOpenApiDocument(join(findRepoRoot(), 'openapi', 'gateway.yaml'))

describe('createServiceGraph', () => {
  it('builds the core services, runs the domain inits in order, merges their services, starts and closes them', async () => {
    const order: string[] = []
    const domain = { started: 0, closed: 0 }
    const graph = await createServiceGraph({
      config: loadConfig(env),
      env,
      document,
      logger: createCapturingLogger().logger,
      now: () => 1_800_000_000,
      clockOverridden: true,
      domains: [
        (core) => {
          order.push(`a:${core.dialect}`)
          return { services: { graphTestDomain: domain }, start: () => void domain.started++, close: () => void domain.closed++ }
        },
        () => {
          order.push('b')
          return {}
        },
      ],
    })
    expect(order).toEqual(['a:sqlite', 'b'])
    const s: Services = graph.services
    expect(s.graphTestDomain).toBe(domain)
    expect(s.now()).toBe(1_800_000_000)
    for (const name of ['catalogue', 'gate', 'login', 'quota', 'marketplace', 'modelServer', 'inbound'] as const) expect(s[name]).toBeDefined()
    expect(await s.metricsText()).toContain('gate_redirects_total')
    await graph.start()
    expect(domain.started).toBe(1)
    await graph.close()
    expect(domain.closed).toBe(1)
  })

  it('builds every default domain eagerly, in one place: shadow, storage, batch and /llm with its proxy and agent', async () => {
    const graph = await createServiceGraph({
      config: loadConfig(env),
      env,
      document,
      logger: createCapturingLogger().logger,
      now: () => 1_800_000_000,
      clockOverridden: true,
    })
    const s = graph.services
    for (const name of ['shadow', 'storage', 'batch', 'llmKeys', 'openAi', 'coreAgent', 'cabinetRoster', 'overlordAddress'] as const) expect(s[name], name).toBeDefined()
    // The graph's domains answer no request: their security schemes are the HTTP side's (src/handlers/*/…Security.ts).
    for (const setup of graph.setups) expect(setup.securityHandlers).toBeUndefined()
    expect(await s.metricsText()).toContain('storage_upstream_credit_low')
    await graph.close()
  })

  it('closes the database it opened when a domain init fails', async () => {
    await expect(
      createServiceGraph({
        config: loadConfig(env),
        env,
        document,
        logger: createCapturingLogger().logger,
        now: () => 1,
        clockOverridden: false,
        domains: [
          () => {
            throw new Error('bad domain config')
          },
        ],
      }),
    ).rejects.toThrow('bad domain config')
  })
})
