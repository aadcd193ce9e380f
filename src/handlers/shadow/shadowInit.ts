import { ConfigError } from '../../config/ConfigError.js'
import { readShadowConfig, ShadowConfigError } from '../../shadow/config.js'
import { createShadowTier } from '../../shadow/createShadowTier.js'
import { ShadowError } from '../../overlord/ShadowError.js'
import type { DomainInit, HandlerContext } from '../types.js'
import { callerOf, verifiedCallerOf } from './shadowHandlers.js'

/**
 * Start hook of the shadow tier: reads `SHADOW_*` (a weak `SHADOW_JWT_SECRET` with an overlord address set
 * refuses start), opens the nonce store (PostgreSQL main database, or the SQLite file of
 * `SHADOW_NONCES_PATH`), creates the vault — sealed — and the cabinet service.
 */
export const shadowInit: DomainInit = async (core) => {
  let config
  try {
    config = readShadowConfig({ ...core.env, SERVICE_DATA_DIR: core.config.dataDir, SERVICE_PUBLIC_ORIGIN: core.config.publicOrigin })
  } catch (error) {
    if (error instanceof ShadowConfigError) throw new ConfigError(error.variable, error.shortMessage)
    throw error
  }
  const tier = await createShadowTier({
    config,
    database: { db: core.db, dialect: core.dialect },
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
    // Bearer checked before the body is read; a turned-away request is audited with its precise code.
    securityHandlers: { overlordBearer: (ctx: HandlerContext) => tier.overlord.authenticate(callerOf(ctx)) },
    unauthorized: {
      overlordBearer: async (ctx: HandlerContext) => {
        const target = ctx.params.co ?? ctx.params.agent_id ?? ''
        const error = await tier.overlord.rejectUnauthenticated(await verifiedCallerOf(ctx), ctx.operationId, target)
        return { status: error.status, body: { error: error.code, message: error.shortMessage } }
      },
    },
    close: () => tier.close(),
  }
}
