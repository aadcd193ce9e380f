import { join } from 'node:path'
import { CabinetFiles } from '../cabinet/CabinetFiles.js'
import { CabinetService, type FaultHook } from '../cabinet/CabinetService.js'
import type { EventSink } from '../catalogue/EventSink.js'
import type { DatabaseHandle } from '../db/createDatabase.js'
import { unlockMessageFor, Vault } from '../vault/Vault.js'
import { BearerTokens } from './BearerTokens.js'
import type { ShadowConfig } from './config.js'
import { NonceStore, type NonceStoreOptions } from './NonceStore.js'
import { openNonceDatabase } from './openNonceDatabase.js'
import { ShadowChallenges } from './ShadowChallenges.js'
import { ShadowOverlord } from './ShadowOverlord.js'

export type ShadowTier = {
  overlord: ShadowOverlord
  vault: Vault
  cabinets: CabinetService
  nonces: NonceStore
  config: ShadowConfig
  close: () => Promise<void>
}

export type CreateShadowTierParameters = {
  config: ShadowConfig
  database: Pick<DatabaseHandle, 'db' | 'dialect'>
  events: EventSink
  now?: () => number
  nonceOptions?: NonceStoreOptions
  faults?: FaultHook
  onAuditFailure?: (error: unknown) => void
  onVaultInitialised?: () => void
}

/**
 * Wires the tier from its configuration. The vault always starts sealed (seed 000 §3.4). Throws
 * `ShadowConfigError` earlier, in `readShadowConfig`, when the JWT secret is weak.
 */
export async function createShadowTier(p: CreateShadowTierParameters): Promise<ShadowTier> {
  const { config } = p
  const nonceDb = await openNonceDatabase(p.database, config.noncesPath)
  const nonces = new NonceStore(nonceDb.db, { now: p.now, ...p.nonceOptions })
  const overlordAddress = () => config.overlordAddress
  const vault = new Vault({ path: join(config.dataDir, 'vault.json'), overlordAddress, unlockMessage: unlockMessageFor(config.publicOrigin), now: p.now })
  const cabinets = new CabinetService({ vault, files: new CabinetFiles(config.dataDir), events: p.events, now: p.now, faults: p.faults })
  const overlord = new ShadowOverlord({
    challenges: new ShadowChallenges(nonces, overlordAddress, config.publicOrigin),
    bearer: config.jwtSecret ? new BearerTokens(config.jwtSecret, p.now) : undefined,
    vault,
    cabinets,
    events: p.events,
    overlordAddress,
    unlockProofPath: config.unlockProofPath,
    onAuditFailure: p.onAuditFailure,
    onVaultInitialised: p.onVaultInitialised,
  })
  return {
    overlord,
    vault,
    cabinets,
    nonces,
    config,
    close: async () => {
      vault.lock()
      await nonceDb.close()
    },
  }
}
