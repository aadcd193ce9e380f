import { LoginService } from '../auth/LoginService.js'
import type { DatabaseHandle } from '../db/createDatabase.js'
import { Marketplace } from '../marketplace/Marketplace.js'
import type { GatewayMetrics } from './GatewayMetrics.js'
import type { CoreInputs } from './createCoreServices.js'
import type { Services } from './types.js'

/** What the session and agent-registry services read from the shadow domain, when it is built (before them). */
export type ShadowLookups = Pick<Services, 'overlordAddress' | 'cabinetRoster'>

/**
 * Sign-in sessions and the agent registry (marketplace). Both are cached while the database reports every
 * change to them (`SERVICE_CACHE__ENABLED`); `close` unsubscribes them.
 */
export function createSessionServices(
  p: CoreInputs,
  database: DatabaseHandle,
  metrics: GatewayMetrics,
  events: Services['catalogue'],
  verifySignature: ConstructorParameters<typeof LoginService>[0]['verifySignature'],
  shadow: ShadowLookups,
) {
  const { config, logger, now } = p
  const changeFeed = config.cache.enabled ? database.changeFeed : undefined
  const login = new LoginService({
    db: database.db,
    publicOrigin: config.publicOrigin,
    chainId: config.login.chainId,
    statement: config.login.statement,
    challengeTtlS: config.login.challengeTtlS,
    sessionTtlS: config.login.sessionTtlS,
    events,
    now,
    overlordAddress: shadow.overlordAddress,
    verifySignature,
    changeFeed,
    onCacheEvent: metrics.cacheEventRecorder('session'),
    commit: database.backgroundCommit,
  })
  const marketplace = new Marketplace({
    db: database.db,
    chatModel: config.modelServer.chatModel,
    embedModel: config.modelServer.embedModel,
    now,
    roster: shadow.cabinetRoster ?? (() => Promise.resolve(undefined)),
    changeFeed,
    onCacheEvent: metrics.cacheEventRecorder('agent_registry'),
  })
  const unlogFeed = changeFeed?.subscribe((change) => {
    if (change.kind === 'all' && change.reason.startsWith('change feed lost')) logger.warn({ reason: change.reason }, 'caches bypassed until the change feed is back')
    else if (change.kind === 'all' && change.reason === 'change feed listening') logger.info('caches on: change feed listening')
  })
  return {
    services: { login, marketplace },
    /** PostgreSQL: the first attempt to LISTEN is over before requests come (until it succeeds, caches are bypassed). */
    ready: async () => changeFeed?.ready(),
    close: () => {
      login.close()
      marketplace.close()
      unlogFeed?.()
    },
  }
}
