import { randomBytes, randomUUID } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts'
import type { CatalogueEvent, CatalogueEventInput, EventSink } from '../../src/catalogue/EventSink.js'

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
