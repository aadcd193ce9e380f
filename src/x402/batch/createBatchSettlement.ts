import type { Kysely } from 'kysely'
import type { Database } from '../../db/Database.js'
import type { Logger } from '../../shared/logger.js'
import type { X402Config } from '../config.js'
import { EVM_NETWORKS } from '../networks.js'
import { FacilitatorClient } from '../FacilitatorClient.js'
import { FacilitatorPool } from '../FacilitatorPool.js'
import { BatchSettlement } from './BatchSettlement.js'
import type { BatchSettlementConfig } from './config.js'
import { facilitatorClientOf } from './facilitatorClientOf.js'

export type CreateBatchSettlementParameters = {
  db: Kysely<Database>
  x402: X402Config
  config: BatchSettlementConfig
  /** This instance's id: the claim jobs' lease holder. */
  holder: string
  logger?: Logger
  now?: () => number
}

/**
 * The `batch-settlement` scheme on every EVM network with a token (`SERVICE_X402__ASSET__*`), paid to
 * `SERVICE_X402__PAY_TO_EVM`, through the same facilitators as the other rails; undefined when it is not
 * configured (`SERVICE_X402__BATCH__AUTHORIZER_KEY`, the pay-to address, the facilitator token).
 */
export function createBatchSettlement(p: CreateBatchSettlementParameters): BatchSettlement | undefined {
  const { x402 } = p
  if (!p.config.authorizerKey || x402.payToEvm === '' || x402.facilitatorToken === '') return undefined
  const clients = [x402.facilitatorUrl, ...x402.fallbackFacilitatorUrls].map((url) => new FacilitatorClient({ url, token: x402.facilitatorToken }))
  const pool = new FacilitatorPool({
    clients,
    onFailover: (info) => p.logger?.warn({ step: info.step, from: info.from, to: info.to }, 'facilitator unreachable: trying the next'),
  })
  const networks = EVM_NETWORKS.flatMap(({ network }) => {
    const asset = x402.assets[network]
    return asset ? [{ network, asset: asset as `0x${string}`, tokenName: x402.tokenName, tokenVersion: x402.tokenVersion }] : []
  })
  return BatchSettlement.create({
    db: p.db,
    config: p.config,
    payTo: x402.payToEvm,
    networks,
    facilitator: facilitatorClientOf(pool, clients[0]),
    holder: p.holder,
    logger: p.logger,
    now: p.now,
  })
}
