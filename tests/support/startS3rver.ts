/**
 * Test helper: a real S3-compatible server in this process — `s3rver` (npm), which keeps objects as files in a
 * temporary directory and knows one access key (`S3RVER`/`S3RVER`): it refuses other key ids but does not check the
 * Signature Version 4 itself (src/storage/spool/S3SpoolStore.test.ts does). The gateway's `S3SpoolStore` talks to it
 * over HTTP exactly as to any S3-compatible endpoint.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import S3rver from 's3rver'
import type { S3SpoolConfig } from '../../src/storage/spool/S3SpoolStore.js'

export type RunningS3 = { config: S3SpoolConfig; endpoint: string; close: () => Promise<void> }

export async function startS3rver(bucket = 'gateway-spool'): Promise<RunningS3> {
  const directory = await mkdtemp(join(tmpdir(), 's3rver-'))
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket, configs: [] }] })
  const address = (await server.run()) as AddressInfo
  const endpoint = `http://127.0.0.1:${address.port}`
  return {
    endpoint,
    config: { bucket, prefix: 'spool/', region: 'us-east-1', endpoint, forcePathStyle: true, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    close: async () => {
      await server.close()
      await rm(directory, { recursive: true, force: true })
    },
  }
}
