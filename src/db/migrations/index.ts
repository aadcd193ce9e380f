import type { Migration } from 'kysely/migration'
import { migration as m0001 } from './0001_catalogue.js'
import { migration as m0002 } from './0002_login.js'
import { migration as m0003 } from './0003_shadow.js'
import { migration as m0004 } from './0004_storage.js'
import { migration as m0005 } from './0005_batches.js'
import { migration as m0006 } from './0006_marketplace.js'
import { migration as m0007 } from './0007_storage_attest.js'
import { migration as m0008 } from './0008_storage_attest_chain.js'
import { migration as m0009 } from './0009_llm_keys.js'
import { migration as m0010 } from './0010_cost_ledger.js'
import { migration as m0011 } from './0011_cluster.js'
import { migration as m0012 } from './0012_change_feed.js'
import { migration as m0013 } from './0013_payment_identifiers.js'
import { migration as m0014 } from './0014_payment_claims.js'
import { migration as m0015 } from './0015_admin_tier.js'
import { migration as m0016 } from './0016_spool_chunks.js'
import { migration as m0017 } from './0017_settlement_debts.js'
import { migration as m0018 } from './0018_batch_settlement.js'
import { migration as m0019 } from './0019_siwx_nonces.js'
import { migration as m0020 } from './0020_batch_lease.js'
import { migration as m0021 } from './0021_upto_checkpoints.js'

/** Every migration, applied in key order. Append new ones; never edit one that has shipped. */
export const migrations: Record<string, Migration> = {
  '0001_catalogue': m0001,
  '0002_login': m0002,
  '0003_shadow': m0003,
  '0004_storage': m0004,
  '0005_batches': m0005,
  '0006_marketplace': m0006,
  '0007_storage_attest': m0007,
  '0008_storage_attest_chain': m0008,
  '0009_llm_keys': m0009,
  '0010_cost_ledger': m0010,
  '0011_cluster': m0011,
  '0012_change_feed': m0012,
  '0013_payment_identifiers': m0013,
  '0014_payment_claims': m0014,
  '0015_admin_tier': m0015,
  '0016_spool_chunks': m0016,
  '0017_settlement_debts': m0017,
  '0018_batch_settlement': m0018,
  '0019_siwx_nonces': m0019,
  '0020_batch_lease': m0020,
  '0021_upto_checkpoints': m0021,
}
