import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { type ICruiseResult, cruise } from 'dependency-cruiser'
import { afterEach, describe, expect, it } from 'vitest'
import { findRepoRoot } from './config/findRepoRoot.js'

// The project's own rule (`npm run lint:deps`), run on small trees laid out like src/.
const config = createRequire(import.meta.url)(join(findRepoRoot(), '.dependency-cruiser.cjs')) as {
  forbidden: unknown[]
  options: Record<string, unknown>
}

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** Lays out `files` (path → source) under a temporary folder and cruises its src/ with the project's rule. */
async function violationsOf(files: Record<string, string>): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'deprule-'))
  dirs.push(dir)
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }))
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), text)
  }
  const { output } = await cruise(
    ['src'],
    { ...config.options, baseDir: dir, tsConfig: { fileName: join(dir, 'tsconfig.json') }, ruleSet: { forbidden: config.forbidden }, validate: true } as never,
  )
  const result = output as ICruiseResult
  return result.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`)
}

const domainFile = "export const gate = (x: number) => x + 1\n"
const handlerFile = "import { gate } from '../gate/ArrivalGate.js'\nexport const handler = () => gate(1)\n"

describe('the dependency rule (.dependency-cruiser.cjs)', () => {
  it('passes a tree whose imports run down the layers', async () => {
    expect(
      await violationsOf({
        'src/gate/ArrivalGate.ts': domainFile,
        'src/handlers/core/pages.ts': handlerFile,
        'src/shared/logger.ts': 'export const log = 1\n',
      }),
    ).toEqual([])
  })

  it('fails on an upward import: a domain importing a handler', async () => {
    expect(
      await violationsOf({
        'src/gate/ArrivalGate.ts': "import { handler } from '../handlers/core/pages.js'\nexport const gate = (x: number) => x + 1\nexport const h = handler\n",
        'src/handlers/core/pages.ts': handlerFile,
      }),
    ).toContain('domains-not-up: src/gate/ArrivalGate.ts → src/handlers/core/pages.ts')
  })

  it('fails when the service graph imports the HTTP wiring, or src/ imports devnet/', async () => {
    const violations = await violationsOf({
      'src/services/createServiceGraph.ts': "import { handler } from '../handlers/core/pages.js'\nimport { peer } from '../../devnet/peer.js'\nexport const g = [handler, peer]\n",
      'src/handlers/core/pages.ts': handlerFile,
      'src/gate/ArrivalGate.ts': domainFile,
      'devnet/peer.ts': 'export const peer = 1\n',
    })
    expect(violations).toContain('services-not-up: src/services/createServiceGraph.ts → src/handlers/core/pages.ts')
    expect(violations).toContain('no-devnet-in-src: src/services/createServiceGraph.ts → devnet/peer.ts')
  })

  it('keeps the model server apart: it shares only src/shared/ with the gateway', async () => {
    const violations = await violationsOf({
      'src/modelserver/app.ts': "import { log } from '../shared/logger.js'\nimport { gate } from '../gate/ArrivalGate.js'\nexport const app = [log, gate]\n",
      'src/shared/logger.ts': 'export const log = 1\n',
      'src/gate/ArrivalGate.ts': domainFile,
    })
    expect(violations).toEqual(['modelserver-apart: src/modelserver/app.ts → src/gate/ArrivalGate.ts'])
  })

  it('lets only the meter import the model-server client: a handler or a domain that calls it directly fails', async () => {
    const client = "export class ModelServerPool { generate() { return 'tokens' } }\n"
    const meter = "import { ModelServerPool } from '../../modelserverClient/ModelServerPool.js'\nexport const meter = new ModelServerPool()\n"
    const viaMeter = {
      'src/modelserverClient/ModelServerPool.ts': client,
      'src/cost/meter/Meter.ts': meter,
      'src/marketplace/Marketplace.ts': "import { meter } from '../cost/meter/Meter.js'\nexport const chat = () => meter.generate()\n",
    }
    expect(await violationsOf(viaMeter)).toEqual([])
    const violations = await violationsOf({
      ...viaMeter,
      'src/handlers/llm/llmHandlers.ts': "import { ModelServerPool } from '../../modelserverClient/ModelServerPool.js'\nexport const unmetered = () => new ModelServerPool().generate()\n",
      'src/llm/OpenAiProxy.ts': "import type { ModelServerPool } from '../modelserverClient/ModelServerPool.js'\nexport const forward = (pool: ModelServerPool) => pool.generate()\n",
      'src/cost/CostPayments.ts': "import { ModelServerPool } from '../modelserverClient/ModelServerPool.js'\nexport const p = ModelServerPool\n",
    })
    expect(violations.sort()).toEqual([
      'only-the-meter-reaches-the-model-server: src/cost/CostPayments.ts → src/modelserverClient/ModelServerPool.ts',
      'only-the-meter-reaches-the-model-server: src/handlers/llm/llmHandlers.ts → src/modelserverClient/ModelServerPool.ts',
      'only-the-meter-reaches-the-model-server: src/llm/OpenAiProxy.ts → src/modelserverClient/ModelServerPool.ts',
    ])
  })

  it('fails on a cycle between two domain rooms, even when no module cycle exists', async () => {
    const violations = await violationsOf({
      'src/auth/CostQuota.ts': 'export const quota = 1\n',
      'src/auth/usesJournal.ts': "import { journal } from '../journal/readJournal.js'\nexport const j = journal\n",
      'src/journal/readJournal.ts': "import { quota } from '../auth/CostQuota.js'\nexport const journal = quota\n",
    })
    expect(violations.some((v) => v.startsWith('no-circular-rooms:'))).toBe(true)
    expect(violations.some((v) => v.startsWith('no-circular:'))).toBe(false)
  })
})

describe('the map of the rooms', () => {
  it('gives every top-level folder of src/ a README saying what it holds and what it may import, and a place in docs/architecture.md', () => {
    const root = findRepoRoot()
    const architecture = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8')
    const rooms = readdirSync(join(root, 'src'), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name)
    expect(rooms.length).toBeGreaterThan(10)
    for (const room of rooms) {
      const readme = join(root, 'src', room, 'README.md')
      expect(existsSync(readme), readme).toBe(true)
      expect(readFileSync(readme, 'utf8'), readme).toMatch(/may import/i)
      expect(architecture, `docs/architecture.md names ${room}/`).toContain(`${room}/`)
    }
  })
})
