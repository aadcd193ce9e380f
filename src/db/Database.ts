/**
 * The whole database schema as kysely sees it: one interface per domain, each kept beside its
 * domain's migration in `migrations/`. Conventions, so both dialects behave the same:
 * - timestamps are integer epoch seconds (`bigint` on PostgreSQL, INTEGER on SQLite);
 * - money is an integer in atomic units stored as a decimal string (TEXT) and handled as `bigint`
 *   in code — never a float, never a JS number;
 * - booleans are integers 0/1.
 */
import type { PaymentIdentifierTables } from './migrations/0013_payment_identifiers.js'
import type { PaymentClaimTables } from './migrations/0014_payment_claims.js'
import type { CatalogueTables } from './migrations/0001_catalogue.js'
import type { LoginTables } from './migrations/0002_login.js'
import type { ShadowTables } from './migrations/0003_shadow.js'
import type { StorageTables } from './migrations/0004_storage.js'
import type { BatchTables } from './migrations/0005_batches.js'
import type { MarketplaceTables } from './migrations/0006_marketplace.js'
import type { LlmKeyTables } from './migrations/0009_llm_keys.js'
import type { CostLedgerTables } from './migrations/0010_cost_ledger.js'
import type { ClusterTables } from './migrations/0011_cluster.js'
import type { AdminTierTables } from './migrations/0015_admin_tier.js'
import type { SpoolChunkTables } from './migrations/0016_spool_chunks.js'
import type { SettlementDebtTables } from './migrations/0017_settlement_debts.js'
import type { BatchSettlementTables } from './migrations/0018_batch_settlement.js'
import type { SiwxNonceTables } from './migrations/0019_siwx_nonces.js'

export interface Database
  extends CatalogueTables,
    LoginTables,
    ShadowTables,
    StorageTables,
    BatchTables,
    MarketplaceTables,
    LlmKeyTables,
    CostLedgerTables,
    ClusterTables,
    PaymentIdentifierTables,
    PaymentClaimTables,
    AdminTierTables,
    SpoolChunkTables,
    SettlementDebtTables,
    BatchSettlementTables,
    SiwxNonceTables {}
