import { randomBytes, randomUUID } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts'
import type { CatalogueEvent, CatalogueEventInput, EventSink } from '../../src/catalogue/EventSink.js'
import { readShadowConfig, type ShadowConfig } from '../../src/shadow/config.js'

/** An event sink that keeps every event in memory (tests, and the no-key-leak sweep). */
export class CollectingEventSink implements EventSink {
  readonly events: CatalogueEvent[] = []
  failWith: Error | undefined

  async emit(input: CatalogueEventInput): Promise<CatalogueEvent> {
    if (this.failWith) throw this.failWith
    const event: CatalogueEvent = {
      event_id: randomUUID(),
      kind: input.kind,
      actor: input.actor ?? 'service.gateway',
      at: Math.floor(Date.now() / 1000),
      severity: input.severity ?? 'info',
      payload: structuredClone(input.payload),
      source_log: 'memory',
    }
    this.events.push(event)
    return event
  }

  ofKind(kind: string): CatalogueEvent[] {
    return this.events.filter((e) => e.kind === kind)
  }
}

export function tempDir(prefix = 'shadow-'): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

/** A fresh test overlord key and a strong JWT secret. */
export function testOverlord(): { account: PrivateKeyAccount; privateKey: `0x${string}`; jwtSecretHex: string } {
  const privateKey = generatePrivateKey()
  return { account: privateKeyToAccount(privateKey), privateKey, jwtSecretHex: randomBytes(32).toString('hex') }
}

/** A controllable clock in epoch seconds. */
export function testClock(start = 1_800_000_000): { now: () => number; advance: (seconds: number) => void; set: (t: number) => void } {
  let t = start
  return { now: () => t, advance: (s) => void (t += s), set: (v) => void (t = v) }
}

/** The admin tier's configuration for `overlord` with its files in `dataDir` (origin `http://gw.test`); `env` adds to it. */
export function shadowTestConfig(dataDir: string, overlord: ReturnType<typeof testOverlord>, env: Record<string, string> = {}): ShadowConfig {
  return readShadowConfig({
    SERVICE_DATA_DIR: dataDir,
    SERVICE_PUBLIC_ORIGIN: 'http://gw.test',
    SHADOW_OVERLORD_ADDRESS: overlord.account.address,
    SHADOW_JWT_SECRET: overlord.jwtSecretHex,
    SHADOW_NONCES_PATH: join(dataDir, 'nonces.sqlite'),
    ...env,
  })
}
