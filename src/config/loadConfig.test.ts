import { execFile } from 'node:child_process'
import path from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { ConfigError } from './ConfigError.js'
import { loadConfig } from './loadConfig.js'

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({})
    expect(c.port).toBe(8000)
    expect(c.dataDir).toBe(path.resolve('./data'))
    expect(c.databaseUrl).toBe(`sqlite:${path.join(path.resolve('./data'), 'gateway.sqlite')}`)
    expect(c.publicOrigin).toBe('http://localhost:8000')
    expect(c.modelServer.baseUrl).toBe('http://127.0.0.1:11434')
    expect(c.sqliteSynchronous).toBe('full')
    expect(c.hardGateEnabled()).toBe(true)
    expect(c.login).toMatchObject({ challengeTtlS: 300, sessionTtlS: 86_400 })
    expect(c.catalogueLogPath).toBe(path.join(path.resolve('./data'), 'catalogue.jsonl'))
  })

  it('reads the price of a cost call past the quota as an integer amount (atomic units), never a float', () => {
    expect(loadConfig({}).quota).toEqual({ costCallsPerDay: 100, pricePerCallAtomic: 1_000n })
    expect(loadConfig({ SERVICE_QUOTA__PRICE_PER_CALL_ATOMIC: '0' }).quota.pricePerCallAtomic).toBe(0n)
    for (const bad of ['0.5', '-1', '1e3', 'lots']) {
      expect(() => loadConfig({ SERVICE_QUOTA__PRICE_PER_CALL_ATOMIC: bad })).toThrow(ConfigError)
    }
  })

  it('selects PostgreSQL with a postgres:// URL', () => {
    expect(loadConfig({ SERVICE_DATABASE_URL: 'postgres://u@h:5432/db' }).databaseUrl).toBe('postgres://u@h:5432/db')
  })

  it('reads one or several model servers from SERVICE_LLM__MODELSERVER__BASE_URL (comma-separated)', () => {
    const one = loadConfig({ SERVICE_LLM__MODELSERVER__BASE_URL: 'http://ms:11434/' }).modelServer
    expect(one).toMatchObject({ baseUrl: 'http://ms:11434', baseUrls: ['http://ms:11434'] })
    const two = loadConfig({ SERVICE_LLM__MODELSERVER__BASE_URL: ' http://a:11434 , https://b.example/ ' }).modelServer
    expect(two).toMatchObject({ baseUrl: 'http://a:11434', baseUrls: ['http://a:11434', 'https://b.example'] })
  })

  it('reads SERVICE_HARD_GATE_ENABLED on every call', () => {
    const env: Record<string, string> = { SERVICE_HARD_GATE_ENABLED: '1' }
    const c = loadConfig(env)
    expect(c.hardGateEnabled()).toBe(true)
    env.SERVICE_HARD_GATE_ENABLED = '0'
    expect(c.hardGateEnabled()).toBe(false)
    env.SERVICE_HARD_GATE_ENABLED = 'garbage'
    expect(c.hardGateEnabled()).toBe(true) // fails closed
  })

  it.each([
    ['SERVICE_PORT', 'eighty'],
    ['SERVICE_PORT', '70000'],
    ['SERVICE_HARD_GATE_ENABLED', 'maybe'],
    ['SERVICE_PUBLIC_ORIGIN', 'not a url'],
    ['SERVICE_PUBLIC_ORIGIN', 'https://gw.example.com/app'],
    ['SERVICE_LLM__MODELSERVER__BASE_URL', 'ftp://models'],
    ['SERVICE_LLM__MODELSERVER__BASE_URL', 'http://a:1,ftp://b'],
    ['SERVICE_LLM__MODELSERVER__BASE_URL', 'http://a:1,http://a:1/'],
    ['SERVICE_LLM__MODELSERVER__BASE_URL', ' , '],
    ['SERVICE_DATABASE_URL', 'mysql://u@h/db'],
    ['SERVICE_LOGIN__SESSION_TTL_S', '5'],
    ['SERVICE_HTTP__RESPONSE_VALIDATION', 'loud'],
    ['SERVICE_DATABASE__SQLITE_SYNCHRONOUS', 'off'],
  ])('rejects %s=%s naming the variable', (name, value) => {
    let error: unknown
    try {
      loadConfig({ [name]: value })
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as ConfigError).variable).toBe(name)
    expect((error as ConfigError).message).toContain(name)
  })

  it('an invalid value stops the start with a message naming the variable', async () => {
    const root = path.resolve(import.meta.dirname, '..', '..')
    const result = await promisify(execFile)(path.join(root, 'node_modules', '.bin', 'tsx'), ['src/main.ts'], {
      cwd: root,
      env: { ...process.env, SERVICE_PORT: 'eighty' },
    }).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => e,
    )
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('Invalid configuration: SERVICE_PORT must be an integer')
  })
})
