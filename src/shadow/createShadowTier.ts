import { join } from 'node:path'
import { CabinetExports } from '../cabinet/CabinetExports.js'
import { CabinetFiles } from '../cabinet/CabinetFiles.js'
import { CabinetService, type FaultHook } from '../cabinet/CabinetService.js'
import { CabinetStore } from '../cabinet/CabinetStore.js'
import type { EventSink } from '../catalogue/EventSink.js'
import type { DatabaseHandle } from '../db/createDatabase.js'
import type { Logger } from '../shared/logger.js'
import { replicaAuthKey } from '../vault/peerKeyWrap.js'
import { importVaultFile, unlockMessageFor, Vault } from '../vault/Vault.js'
import { BearerTokens } from './BearerTokens.js'
import type { ShadowConfig } from './config.js'
import { NonceStore, type NonceStoreOptions } from './NonceStore.js'
import { openNonceDatabase } from './openNonceDatabase.js'
import { ShadowChallenges } from './ShadowChallenges.js'
import { ShadowOverlord } from './ShadowOverlord.js'
import { UnlockPropagation } from './UnlockPropagation.js'

export type ShadowTier = {
  overlord: ShadowOverlord
  vault: Vault
  cabinets: CabinetService
  nonces: NonceStore
  config: ShadowConfig
  /** Unlock per deployment (when the tier runs as one replica among several: `instance` given). */
  propagation: UnlockPropagation | undefined
  /** This replica's registry and agent-map files, rewritten from the database. */
  exports: CabinetExports
  /** Starts the unlock propagation (after the instance registered). */
  start: () => Promise<void>
  close: () => Promise<void>
}

export type CreateShadowTierParameters = {
  config: ShadowConfig
  database: Pick<DatabaseHandle, 'db' | 'dialect' | 'changeFeed'>
  events: EventSink
  now?: () => number
  nonceOptions?: NonceStoreOptions
  faults?: FaultHook
  onAuditFailure?: (error: unknown) => void
  onVaultInitialised?: () => void
  /** This replica in `gateway_instances` (the service graph's `InstanceRegistry`); without it, no propagation. */
  instance?: { id: string; heartbeatMs: number; leaseS: number } | undefined
  logger?: Logger | undefined
}

/**
 * Wires the tier from its configuration. The vault always starts sealed (seed 000 §3.4). The vault, the
 * registry and the agent map live in the main database; a data directory that still holds them as files is
 * imported on the first start (its `vault.json` renamed `vault.json.imported`), then the registry and
 * agent-map files are rewritten from the database and kept current through the change feed. Throws
 * `ShadowConfigError` earlier, in `readShadowConfig`, when the JWT secret is weak.
 */
export async function createShadowTier(p: CreateShadowTierParameters): Promise<ShadowTier> {
  const { config } = p
  const db = p.database.db
  const nonceDb = await openNonceDatabase(p.database, config.noncesPath)
  const nonces = new NonceStore(nonceDb.db, { now: p.now, ...p.nonceOptions })
  const overlordAddress = () => config.overlordAddress
  const files = new CabinetFiles(config.dataDir)
  const store = new CabinetStore(db)
  const imported = await importVaultFile(db, join(config.dataDir, 'vault.json'))
  // only beside an imported vault: a replica's own exports, moved to a new database, are not a record to import
  const importedCabinets = imported > 0 ? await store.importFiles(await files.readRegistry(), await files.readAgentMap()) : { companies: 0, agents: 0 }
  if (imported > 0 || importedCabinets.companies > 0 || importedCabinets.agents > 0) {
    p.logger?.warn({ vault_entries: imported, ...importedCabinets }, 'admin tier: imported the data directory\'s vault, registry and agent map into the database')
  }
  const exports = new CabinetExports(store, files)
  await exports.refresh()
  let propagation: UnlockPropagation | undefined
  const vault = new Vault({
    db,
    overlordAddress,
    unlockMessage: unlockMessageFor(config.publicOrigin),
    now: p.now,
    onLockChange: () => propagation?.poke(),
  })
  // without the shared secret no replica can prove its key is a replica's: no propagation (nor any unlock:
  // the tier needs the secret for every bearer)
  if (p.instance && config.jwtSecret) {
    propagation = new UnlockPropagation({
      authKey: replicaAuthKey(config.jwtSecret),
      db,
      vault,
      instanceId: p.instance.id,
      intervalMs: p.instance.heartbeatMs,
      leaseS: p.instance.leaseS,
      logger: p.logger,
      changeFeed: p.database.changeFeed,
    })
  }
  const refreshExports = () =>
    exports.refresh().catch((error: unknown) => p.logger?.error({ err: String(error) }, 'admin tier: the registry/agent-map export could not be written'))
  const unsubscribe = p.database.changeFeed?.subscribe((change) => {
    // listeners must not touch the database synchronously: the rewrite reads it on a later turn
    if (change.kind === 'all' || change.table === 'cabinet_registry' || change.table === 'agent_map') setImmediate(() => void refreshExports())
  })
  const cabinets = new CabinetService({
    db,
    vault,
    store,
    events: p.events,
    now: p.now,
    faults: p.faults,
    onChange: () => refreshExports(),
    replicaCounts: propagation ? () => propagation.counts() : undefined,
  })
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
    propagation,
    exports,
    start: async () => {
      await propagation?.start()
    },
    close: async () => {
      unsubscribe?.()
      // The key withdrawn before the vault locks: locked first, this replica's next round would publish it as a
      // live locked replica with a key, a peer would wrap the data key to it, and that wrap, landing after this
      // replica's stop deleted its wraps, outlived every replica (seen in CI: all stopped, one wrap left).
      await propagation?.stop()
      vault.lock()
      await nonceDb.close()
    },
  }
}
