/**
 * Every configuration reader of the gateway, given a production configuration that passes the start check
 * (src/config/profile.ts) with every optional capability on: no address it yields is a loopback one the
 * configuration did not name. A new setting whose default is a devnet address fails here until the start check
 * requires it.
 */
import { describe, expect, it } from 'vitest'
import { readBatchConfig } from '../../src/batch/config.js'
import { loadConfig } from '../../src/config/loadConfig.js'
import { missingProductionSettings } from '../../src/config/profile.js'
import { readTokenPricing } from '../../src/cost/config.js'
import { readMcpConfig } from '../../src/mcp/config.js'
import { readShadowConfig } from '../../src/shadow/config.js'
import { readStorageConfig } from '../../src/storage/config.js'
import { readX402Config } from '../../src/x402/config.js'

const key = `0x${'5a'.repeat(32)}`
const production: Record<string, string> = {
  SERVICE_DATA_DIR: '/var/lib/pay2store',
  SERVICE_PUBLIC_ORIGIN: 'https://store.example.com',
  SERVICE_LLM__MODELSERVER__BASE_URL: 'http://modelserver.internal:11434',
  SERVICE_X402__PAY_TO_EVM: '0x52908400098527886E0F7030069857D2E4169EE7',
  SERVICE_X402__PAY_TO_ALGORAND: 'TEBIP2BXCP75UTGVFO4W3FWLGOBBSSH6LEACRCKQBDW7XQU7IPE2LJYYKM',
  SERVICE_X402__FACILITATOR_URL: 'https://facilitator.example.com',
  FACILITATOR_TOKEN: '3f9c1a7be2d84c6f90a15e7d2b8c4f61a0e93d57c2b6f18e4a7d09c35b2e8f14',
  SERVICE_ALGOD__URL: 'https://algod.example.com',
  SERVICE_STORAGE__PAYMENT_URL: 'https://payment.example.com',
  SERVICE_STORAGE__UPLOAD_URL: 'https://upload.example.com',
  SERVICE_STORAGE__GATEWAY_URL: 'https://arweave.example.com',
  // every optional capability on, with the chain each one uses
  SERVICE_STORAGE__ATTESTOR_KEY: key,
  SERVICE_STORAGE__ATTEST_RPC_URL: 'https://base.example.com',
  SERVICE_STORAGE__TOPUP_KEY: key,
  SERVICE_STORAGE__TOPUP_RPC_URL: 'https://base.example.com',
  SERVICE_STORAGE__TOPUP_TOKEN: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
  SERVICE_BATCH__ATTESTOR_KEY: key,
  SERVICE_BATCH__RPC_URL: 'https://base.example.com',
}

/**
 * Loopback values that are not devnet addresses: the OpenTelemetry collector's standard default (a collector beside
 * the process; tracing is off unless `SERVICE_TRACING__ENABLED`).
 */
const NOT_DEVNET = ['http://localhost:4318/v1/traces']

/** Every string in `value`, with the path it was found at. */
function strings(value: unknown, path: string): [string, string][] {
  if (typeof value === 'string') return [[path, value]]
  if (value instanceof Map) return [...value].flatMap(([k, v]) => strings(v, `${path}.${String(k)}`))
  if (Array.isArray(value)) return value.flatMap((v, i) => strings(v, `${path}[${i}]`))
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => strings(v, `${path}.${k}`))
  return []
}

describe('a production configuration', () => {
  it('passes the start check', () => {
    expect(missingProductionSettings(production)).toEqual([])
  })

  it('yields no loopback address it did not name, in any reader of the gateway', () => {
    const configs = {
      core: loadConfig(production),
      x402: readX402Config(production),
      storage: readStorageConfig(production),
      batch: readBatchConfig(production),
      shadow: readShadowConfig(production),
      mcp: readMcpConfig(production),
      pricing: readTokenPricing(production),
    }
    const named = new Set(Object.values(production))
    const fallbacks = Object.entries(configs)
      .flatMap(([name, config]) => strings(config, name))
      .filter(([, v]) => /^https?:\/\/(127\.|localhost|\[::1\])/.test(v) && !named.has(v) && !NOT_DEVNET.includes(v))
    expect(fallbacks).toEqual([])
  })

  it('is what the check is about: the same readers in the devnet profile fall back to the devnet', () => {
    const storage = readStorageConfig({ SERVICE_DATA_DIR: '/tmp/x' })
    expect([storage.paymentUrl, storage.uploadUrl, storage.gatewayUrl]).toEqual(['http://127.0.0.1:8403', 'http://127.0.0.1:8403', 'http://127.0.0.1:8404'])
    expect(readX402Config({}).facilitatorUrl).toBe('http://127.0.0.1:8402')
  })
})
