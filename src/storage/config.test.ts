import { describe, expect, it } from 'vitest'
import { ConfigError } from '../config/ConfigError.js'
import { readX402Config } from '../x402/config.js'
import { readStorageConfig } from './config.js'

const KEY = `0x${'11'.repeat(32)}`

describe('readStorageConfig / readX402Config', () => {
  it('defaults', () => {
    const c = readStorageConfig({ SERVICE_DATA_DIR: '/srv/gw' })
    expect(c).toMatchObject({
      publicOrigin: 'http://localhost:8000',
      paymentUrl: 'http://127.0.0.1:8403',
      gatewayUrl: 'http://127.0.0.1:8404',
      arweaveJwkPath: '/srv/gw/arweave-jwk.json',
      maxUploadBytes: 2n * 1024n ** 3n,
      queueOnUpstreamFailure: false,
      appName: 'pay2store',
      verifyIntervalMs: 5000,
      retryIntervalMs: 5000,
      workerTickMs: 1000,
      spoolDir: '/srv/gw/storage',
      attest: undefined,
      intake: {
        unpaidMaxBytes: 2n * 1024n ** 3n,
        unpaidPerAddress: 4,
        minBytesPerSecond: 8192,
        minRateWindowMs: 10_000,
        maxParts: 8,
        maxFieldBytes: 8192,
        algorandChecksPerAddress: 2,
        algorandUnknownTxMs: 6000,
        earlyDrainMaxBytes: 128 * 1024 ** 2,
        lingerMs: 2000,
      },
    })
    expect(readX402Config({})).toMatchObject({
      facilitatorUrl: 'http://127.0.0.1:8402',
      facilitatorToken: '',
      tokenName: 'USD Coin',
      tokenVersion: '2',
      algodGenesisHash: undefined,
      algodPollIntervalMs: 1500,
      algodTimeoutMs: 30000,
      maxTimeoutSeconds: 60,
    })
  })

  it('an early answer drains what a request without a payment could send, at most 128 MiB', () => {
    expect(readStorageConfig({}).intake.earlyDrainMaxBytes).toBe(128 * 1024 ** 2)
    expect(readStorageConfig({ SERVICE_STORAGE__UNPAID_MAX_BYTES: '5000000' }).intake.earlyDrainMaxBytes).toBe(5_000_000)
    expect(readStorageConfig({ SERVICE_STORAGE__MAX_UPLOAD_BYTES: '4000000' }).intake.earlyDrainMaxBytes).toBe(4_000_000)
    expect(readStorageConfig({ SERVICE_STORAGE__EARLY_DRAIN_MAX_BYTES: '1048576' }).intake.earlyDrainMaxBytes).toBe(1024 ** 2)
  })

  it('values are trimmed; the queue flag is on for 1/true/yes/on only, off for anything else', () => {
    const c = readStorageConfig({ SERVICE_PUBLIC_ORIGIN: ' https://gw.example/ ', SERVICE_STORAGE__QUEUE_ON_UPSTREAM_FAILURE: 'TRUE', SERVICE_STORAGE__VERIFY_INTERVAL_MS: ' 250 ' })
    expect(c).toMatchObject({ publicOrigin: 'https://gw.example', queueOnUpstreamFailure: true, verifyIntervalMs: 250 })
    expect(readStorageConfig({ SERVICE_STORAGE__QUEUE_ON_UPSTREAM_FAILURE: 'maybe' }).queueOnUpstreamFailure).toBe(false)
  })

  it('attestation is on with a key; the RPC defaults to local Base and the contract to the deployment file', () => {
    expect(readStorageConfig({ SERVICE_DATA_DIR: '/srv/gw', SERVICE_STORAGE__ATTESTOR_KEY: KEY }).attest).toEqual({
      rpcUrl: 'http://127.0.0.1:8545', attestorKey: KEY, contract: undefined, deploymentsDir: '/srv/gw',
    })
    const contract = '0x5FbDB2315678afecb367f032d93F642f64180aa3'
    expect(readStorageConfig({ SERVICE_STORAGE__ATTESTOR_KEY: KEY, SERVICE_STORAGE__ATTEST_RPC_URL: 'http://node:8545/', SERVICE_STORAGE__ATTEST_CONTRACT: contract }).attest)
      .toMatchObject({ rpcUrl: 'http://node:8545', contract })
  })

  it.each([
    ['SERVICE_STORAGE__MAX_UPLOAD_BYTES', '0'],
    ['SERVICE_STORAGE__WORKER_TICK_MS', '-5'],
    ['SERVICE_STORAGE__VERIFY_INTERVAL_MS', 'soon'],
    ['SERVICE_STORAGE__ATTESTOR_KEY', '0x1234'],
  ])('refuses %s=%s with a ConfigError naming it', (variable, value) => {
    expect(() => readStorageConfig({ [variable]: value })).toThrow(ConfigError)
    expect(() => readStorageConfig({ [variable]: value })).toThrow(variable)
  })

  it('refuses a bad contract or RPC URL only when attesting, and bad x402 timings', () => {
    expect(() => readStorageConfig({ SERVICE_STORAGE__ATTESTOR_KEY: KEY, SERVICE_STORAGE__ATTEST_CONTRACT: 'nope' })).toThrow('SERVICE_STORAGE__ATTEST_CONTRACT')
    expect(() => readStorageConfig({ SERVICE_STORAGE__ATTESTOR_KEY: KEY, SERVICE_STORAGE__ATTEST_RPC_URL: 'ftp://x' })).toThrow('SERVICE_STORAGE__ATTEST_RPC_URL')
    expect(readStorageConfig({ SERVICE_STORAGE__ATTEST_CONTRACT: 'nope' }).attest).toBeUndefined()
    expect(() => readX402Config({ SERVICE_ALGOD__TIMEOUT_MS: '0' })).toThrow(ConfigError)
  })

  it('intake: the unpaid body bound never exceeds the upload maximum; a zero bound is refused', () => {
    expect(readStorageConfig({ SERVICE_STORAGE__MAX_UPLOAD_BYTES: '1000', SERVICE_STORAGE__UNPAID_MAX_BYTES: '5000' }).intake.unpaidMaxBytes).toBe(1000n)
    expect(readStorageConfig({ SERVICE_STORAGE__UNPAID_MAX_BYTES: '5000' }).intake.unpaidMaxBytes).toBe(5000n)
    expect(() => readStorageConfig({ SERVICE_STORAGE__UNPAID_MAX_BYTES: '0' })).toThrow(ConfigError)
    expect(() => readStorageConfig({ SERVICE_STORAGE__UNPAID_PER_ADDRESS: '0' })).toThrow(ConfigError)
  })

  it('spool store: auto by default; s3 needs a bucket, and both keys or neither', () => {
    expect(readStorageConfig({})).toMatchObject({ spoolStore: 'auto', s3: undefined })
    expect(() => readStorageConfig({ SERVICE_STORAGE__SPOOL_STORE: 'nfs' })).toThrow('SERVICE_STORAGE__SPOOL_STORE')
    expect(() => readStorageConfig({ SERVICE_STORAGE__SPOOL_STORE: 's3' })).toThrow('SERVICE_STORAGE__S3_BUCKET')
    const bucket = { SERVICE_STORAGE__SPOOL_STORE: 's3', SERVICE_STORAGE__S3_BUCKET: 'paid-spool' }
    expect(readStorageConfig(bucket).s3).toEqual({
      bucket: 'paid-spool', prefix: 'spool/', region: 'us-east-1', endpoint: undefined, forcePathStyle: false, accessKeyId: undefined, secretAccessKey: undefined,
    })
    expect(readStorageConfig({ ...bucket, SERVICE_STORAGE__S3_ENDPOINT: 'http://minio:9000/' }).s3).toMatchObject({ endpoint: 'http://minio:9000', forcePathStyle: true })
    expect(() => readStorageConfig({ ...bucket, SERVICE_STORAGE__S3_ENDPOINT: 'minio:9000' })).toThrow('SERVICE_STORAGE__S3_ENDPOINT')
    expect(() => readStorageConfig({ ...bucket, SERVICE_STORAGE__S3_ACCESS_KEY_ID: 'AK' })).toThrow('SERVICE_STORAGE__S3_SECRET_ACCESS_KEY')
    // the secret is named in the error, never shown
    let message = ''
    try {
      readStorageConfig({ ...bucket, SERVICE_STORAGE__S3_SECRET_ACCESS_KEY: 'very-secret-value' })
    } catch (error) {
      message = String(error)
    }
    expect(message).toContain('SERVICE_STORAGE__S3_SECRET_ACCESS_KEY')
    expect(message).not.toContain('very-secret-value')
  })
})
