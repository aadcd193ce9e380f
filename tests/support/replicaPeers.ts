/**
 * What the multi-replica storage tests share (tests/reliability/takeover and deadReplicaUpload): the EVM devnet
 * peers, one PostgreSQL database for every replica, an upstream that takes the bytes and never answers (so a
 * replica is mid-upload when it is killed), a folder for the replicas' data directories, and the spawned
 * gateways, crashed at the end. Registers its own `beforeAll`/`afterAll`; the fields are set once `beforeAll` ran.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll } from 'vitest'
import { type EvmPeers, startEvmPeers } from '../storage/harness.js'
import type { SpawnedGateway } from './spawnGateway.js'
import { startBlackHoleUpstream } from './startBlackHoleUpstream.js'
import { createTestDatabase, type TestDatabase } from './testDatabase.js'

export type ReplicaPeers = { peers: EvmPeers; database: TestDatabase; blackHoleUrl: string; dir: string; spawned: SpawnedGateway[] }

export function useReplicaPeers(folderPrefix: string): ReplicaPeers {
  const r = { spawned: [] as SpawnedGateway[] } as ReplicaPeers
  let blackHole: Awaited<ReturnType<typeof startBlackHoleUpstream>> | undefined
  beforeAll(async () => {
    ;[r.peers, r.database] = await Promise.all([startEvmPeers(), createTestDatabase('postgres')])
    r.dir = await mkdtemp(join(tmpdir(), folderPrefix))
    blackHole = await startBlackHoleUpstream()
    r.blackHoleUrl = blackHole.url
  }, 180_000)
  afterAll(async () => {
    await Promise.allSettled(r.spawned.map((g) => g.crash()))
    await blackHole?.close()
    await r.database?.close()
    await r.peers?.close()
    if (r.dir) await rm(r.dir, { recursive: true, force: true })
  })
  return r
}
