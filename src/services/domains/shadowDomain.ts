import { ConfigError } from '../../config/ConfigError.js'
import { ShadowError } from '../../overlord/ShadowError.js'
import { readShadowConfig, ShadowConfigError } from '../../shadow/config.js'
import { createShadowTier } from '../../shadow/createShadowTier.js'
import type { DomainPlugin, EarlyDomainInit } from '../DomainPlugin.js'

/**
 * The shadow tier: reads `SHADOW_*` (a weak `SHADOW_JWT_SECRET` with an overlord address set refuses start),
 * opens the nonce store (PostgreSQL main database, or the SQLite file of `SHADOW_NONCES_PATH`), creates the
 * vault — sealed — and the cabinet service. Its bearer scheme is answered by `src/handlers/shadow/shadowSecurity.ts`.
 */
export const initShadow: EarlyDomainInit = async (core) => {
  let config
  try {
    config = readShadowConfig({ ...core.env, SERVICE_DATA_DIR: core.config.dataDir, SERVICE_PUBLIC_ORIGIN: core.config.publicOrigin })
  } catch (error) {
    if (error instanceof ShadowConfigError) throw new ConfigError(error.variable, error.shortMessage)
    throw error
  }
  const tier = await createShadowTier({
    config,
    database: { db: core.db, dialect: core.dialect, changeFeed: core.changeFeed },
    instance: core.instance ? { id: core.instance.id, heartbeatMs: core.instance.heartbeatMs, leaseS: core.instance.leaseS } : undefined,
    logger: core.logger,
    events: core.catalogue,
    now: core.now,
    onAuditFailure: (error) => core.logger.error({ err: error }, 'shadow audit event could not be written'),
    onVaultInitialised: () => core.logger.warn({ vault: 'initialised' }, 'first unlock: a new sealed vault was initialised'),
  })
  core.logger.info(
    { overlord_configured: Boolean(config.overlordAddress), nonce_store: core.dialect === 'postgres' ? 'postgres' : 'sqlite-file', vault_unlocked: false },
    'shadow tier ready (vault sealed)',
  )
  return {
    services: {
      shadow: tier,
      cabinetRoster: async (company: string) => {
        try {
          return (await tier.cabinets.roster(company)).members
        } catch (error) {
          if (error instanceof ShadowError && error.code === 'cabinet_not_found') return undefined
          throw error
        }
      },
      overlordAddress: () => config.overlordAddress,
    },
    start: () => tier.start(),
    close: () => tier.close(),
  }
}

/** Built before sessions and the agent registry: they read its overlord address and rosters. */
export const shadowDomain: DomainPlugin = { name: 'shadow', beforeSessions: true, create: initShadow }
