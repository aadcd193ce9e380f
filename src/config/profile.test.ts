import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ConfigError } from './ConfigError.js'
import { missingProductionSettings, productionStartRefusal, readProfile } from './profile.js'

const names = (env: Record<string, string>) => missingProductionSettings(env).map((m) => m.name)

/** What every production start needs, whatever else it turns on. */
const CORE = {
  SERVICE_DATA_DIR: '/var/lib/pay2store',
  SERVICE_PUBLIC_ORIGIN: 'https://store.example.com',
  SERVICE_LLM__MODELSERVER__BASE_URL: 'http://modelserver.internal:11434',
}

const PAID_STORAGE = {
  SERVICE_X402__PAY_TO_EVM: '0x52908400098527886E0F7030069857D2E4169EE7',
  SERVICE_X402__PAY_TO_ALGORAND: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAY5HFKQ',
  SERVICE_X402__FACILITATOR_URL: 'https://facilitator.example.com',
  FACILITATOR_TOKEN: 'a'.repeat(64),
  SERVICE_ALGOD__URL: 'https://algod.example.com',
  SERVICE_STORAGE__PAYMENT_URL: 'https://payment.example.com',
  SERVICE_STORAGE__UPLOAD_URL: 'https://upload.example.com',
  SERVICE_STORAGE__GATEWAY_URL: 'https://arweave.example.com',
}

describe('the start profile', () => {
  it('is production unless SERVICE_PROFILE says devnet; another value is refused, naming the variable', () => {
    expect(readProfile({})).toBe('production')
    expect(readProfile({ SERVICE_PROFILE: ' ' })).toBe('production')
    expect(readProfile({ SERVICE_PROFILE: 'devnet' })).toBe('devnet')
    expect(() => readProfile({ SERVICE_PROFILE: 'dev' })).toThrow(ConfigError)
    expect(() => readProfile({ SERVICE_PROFILE: 'dev' })).toThrow(/SERVICE_PROFILE must be one of devnet, production/)
  })
})

describe('a production start', () => {
  it('with nothing configured needs the data directory, the public origin and the model server, and nothing of what is off', () => {
    expect(names({})).toEqual(['SERVICE_DATA_DIR', 'SERVICE_PUBLIC_ORIGIN', 'SERVICE_LLM__MODELSERVER__BASE_URL'])
    expect(names(CORE)).toEqual([])
  })

  it('turns paid storage on with any one of its settings, and then needs every address of it (none falls back to the devnet)', () => {
    for (const [name, value] of Object.entries(PAID_STORAGE)) {
      const missing = names({ ...CORE, [name]: value })
      expect(missing, name).toEqual(Object.keys(PAID_STORAGE).filter((n) => n !== name))
    }
    expect(names({ ...CORE, ...PAID_STORAGE })).toEqual([])
  })

  it('with a key for attestation, top-ups or the batch needs the chain each one uses', () => {
    const key = `0x${'1'.repeat(64)}`
    expect(names({ ...CORE, ...PAID_STORAGE, SERVICE_STORAGE__ATTESTOR_KEY: key })).toEqual(['SERVICE_STORAGE__ATTEST_RPC_URL'])
    expect(names({ ...CORE, ...PAID_STORAGE, SERVICE_STORAGE__TOPUP_KEY: key })).toEqual(['SERVICE_STORAGE__TOPUP_RPC_URL'])
    expect(names({ ...CORE, SERVICE_BATCH__ATTESTOR_KEY: key })).toEqual(['SERVICE_BATCH__RPC_URL'])
    expect(names({ ...CORE, SERVICE_BATCH__ENABLED: '1' })).toEqual(['SERVICE_BATCH__RPC_URL'])
    expect(names({ ...CORE, SERVICE_BATCH__ENABLED: '0' })).toEqual([])
    expect(names({ ...CORE, SERVICE_BATCH__ATTESTOR_KEY: key, SERVICE_BATCH__RPC_URL: 'https://base.example.com' })).toEqual([])
  })

  it('counts a blank value as unset (an empty `${VAR:-}` of compose is not a setting)', () => {
    expect(names({ ...CORE, SERVICE_PUBLIC_ORIGIN: '  ' })).toEqual(['SERVICE_PUBLIC_ORIGIN'])
    expect(names({ ...CORE, SERVICE_X402__PAY_TO_EVM: '' })).toEqual([])
  })
})

describe('the refusal', () => {
  const dirs: string[] = []
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))
  const dir = () => {
    const d = mkdtempSync(join(tmpdir(), 'profile-'))
    dirs.push(d)
    return d
  }

  it('names every missing setting with what it is for, and the way to the devnet', () => {
    const refusal = productionStartRefusal({ SERVICE_X402__PAY_TO_EVM: PAID_STORAGE.SERVICE_X402__PAY_TO_EVM }, '/nowhere')!
    expect(refusal).toMatch(/never falls back to the devnet's local addresses/)
    for (const name of ['SERVICE_DATA_DIR', 'SERVICE_PUBLIC_ORIGIN', 'SERVICE_LLM__MODELSERVER__BASE_URL', 'SERVICE_X402__FACILITATOR_URL', 'SERVICE_STORAGE__GATEWAY_URL', 'FACILITATOR_TOKEN']) {
      expect(refusal).toMatch(new RegExp(`^  ${name} — \\S`, 'm'))
    }
    expect(refusal).not.toMatch(/^  SERVICE_X402__PAY_TO_EVM /m)
    expect(refusal).toContain('SERVICE_PROFILE=devnet')
    expect(refusal).toContain('docs/configuration.md')
  })

  it("refuses a data directory that holds a devnet's state (npm start's), and takes one that does not", () => {
    const own = dir()
    expect(productionStartRefusal({ ...CORE, SERVICE_DATA_DIR: own }, own)).toBeUndefined()
    const withFile = dir()
    writeFileSync(join(withFile, 'devnet.json'), '{}')
    expect(productionStartRefusal({ ...CORE, SERVICE_DATA_DIR: withFile }, withFile)).toMatch(/holds a devnet's state \(devnet\.json\)/)
    const withKeys = dir()
    mkdirSync(join(withKeys, 'devnet'))
    expect(productionStartRefusal({ ...CORE, SERVICE_DATA_DIR: withKeys }, withKeys)).toMatch(/holds a devnet's state \(devnet\)/)
  })
})
