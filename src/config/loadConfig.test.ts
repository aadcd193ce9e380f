import { execFile } from 'node:child_process'
import path from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { ConfigError } from './ConfigError.js'
import { loadConfig } from './loadConfig.js'

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({})
    expect(c.profile).toBe('production')
    expect(c.health).toEqual({ checkIntervalMs: 5_000, checkTimeoutMs: 3_000 })
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
    expect(loadConfig({}).quota).toEqual({
      costCallsPerDay: 100,
      pricePerCallAtomic: 1_000n,
      // the calls of one client network, 10 × a wallet's by default; IPv4 /24, IPv6 /48
      costCallsPerNetworkPerDay: 1000,
      networkWidth: { ipv4Prefix: 24, ipv6Prefix: 48 },
    })
    expect(loadConfig({ SERVICE_QUOTA__PRICE_PER_CALL_ATOMIC: '0' }).quota.pricePerCallAtomic).toBe(0n)
    for (const bad of ['0.5', '-1', '1e3', 'lots']) {
      expect(() => loadConfig({ SERVICE_QUOTA__PRICE_PER_CALL_ATOMIC: bad })).toThrow(ConfigError)
    }
  })

  it('reads the keep_alive bounds of session callers and refuses a ceiling below the floor', () => {
    expect(loadConfig({}).keepAlive).toEqual({ minS: 60, maxS: 1800 })
    expect(loadConfig({ SERVICE_LLM__KEEP_ALIVE_MIN_S: '0', SERVICE_LLM__KEEP_ALIVE_MAX_S: '0' }).keepAlive).toEqual({ minS: 0, maxS: 0 })
    expect(() => loadConfig({ SERVICE_LLM__KEEP_ALIVE_MIN_S: '600', SERVICE_LLM__KEEP_ALIVE_MAX_S: '60' })).toThrow(ConfigError)
  })

  it('selects the Redis rate-limit store by its URL; refuses redis without one, or a URL of another scheme', () => {
    expect(loadConfig({}).rateLimit).toMatchObject({ store: 'memory', redis: undefined })
    expect(loadConfig({ SERVICE_RATE_LIMIT__REDIS_URL: 'redis://127.0.0.1:6379' }).rateLimit).toMatchObject({
      store: 'redis',
      redis: { url: 'redis://127.0.0.1:6379', prefix: 'p2s:rl:', timeoutMs: 250 },
    })
    // an explicit store wins over the URL
    expect(loadConfig({ SERVICE_RATE_LIMIT__REDIS_URL: 'redis://r', SERVICE_RATE_LIMIT__STORE: 'database' }).rateLimit).toMatchObject({ store: 'database', redis: undefined })
    expect(() => loadConfig({ SERVICE_RATE_LIMIT__STORE: 'redis' })).toThrow(/SERVICE_RATE_LIMIT__REDIS_URL must be set/)
    expect(() => loadConfig({ SERVICE_RATE_LIMIT__REDIS_URL: 'http://127.0.0.1:6379' })).toThrow(/redis:\/\/ or rediss:\/\//)
  })

  it('reads the shutdown drain delay, quiet period and deadline (defaults 0, 0 and 25 s); a delay or quiet period past the deadline stops the start', () => {
    expect(loadConfig({}).shutdown).toEqual({ drainDelayMs: 0, quietMs: 0, deadlineMs: 25_000 })
    expect(loadConfig({ SERVICE_SHUTDOWN__DRAIN_DELAY_MS: '3000', SERVICE_SHUTDOWN__QUIET_MS: '1000', SERVICE_SHUTDOWN__DEADLINE_MS: '20000' }).shutdown).toEqual({
      drainDelayMs: 3000,
      quietMs: 1000,
      deadlineMs: 20_000,
    })
    expect(() => loadConfig({ SERVICE_SHUTDOWN__DRAIN_DELAY_MS: '30000' })).toThrow(/SERVICE_SHUTDOWN__DRAIN_DELAY_MS must not exceed/)
    expect(() => loadConfig({ SERVICE_SHUTDOWN__DRAIN_DELAY_MS: '20000', SERVICE_SHUTDOWN__QUIET_MS: '6000' })).toThrow(/SERVICE_SHUTDOWN__QUIET_MS with the drain delay must not exceed/)
  })

  it('traces: off by default; the OTLP endpoint from SERVICE_TRACING__OTLP_ENDPOINT, else the standard OTEL_* variables', () => {
    expect(loadConfig({}).tracing).toEqual({ enabled: false, serviceName: 'pay2store-gateway', serviceVersion: '1.0.0', otlpTracesUrl: 'http://localhost:4318/v1/traces', sampleRatio: 1 })
    const on = { SERVICE_TRACING__ENABLED: '1' }
    expect(loadConfig({ ...on, SERVICE_TRACING__OTLP_ENDPOINT: 'http://collector:4318/' }).tracing.otlpTracesUrl).toBe('http://collector:4318/v1/traces')
    expect(loadConfig({ ...on, OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example' }).tracing.otlpTracesUrl).toBe('https://otel.example/v1/traces')
    expect(loadConfig({ ...on, OTEL_EXPORTER_OTLP_ENDPOINT: 'https://a', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://b/traces' }).tracing.otlpTracesUrl).toBe('https://b/traces')
    expect(loadConfig({ ...on, SERVICE_TRACING__OTLP_ENDPOINT: 'http://own:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://b/traces' }).tracing.otlpTracesUrl).toBe('http://own:4318/v1/traces')
    expect(loadConfig({ ...on, OTEL_SERVICE_NAME: 'gw-eu', SERVICE_TRACING__SAMPLE_RATIO: '0.25' }).tracing).toMatchObject({ enabled: true, serviceName: 'gw-eu', sampleRatio: 0.25 })
    expect(() => loadConfig({ ...on, SERVICE_TRACING__OTLP_ENDPOINT: 'grpc://collector:4317' })).toThrow(/SERVICE_TRACING__OTLP_ENDPOINT must be an http\(s\) URL/)
    expect(() => loadConfig({ ...on, OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT must be an http\(s\) URL/)
    // off, another program's OTEL_* settings do not stop the start
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }).tracing.enabled).toBe(false)
    for (const ratio of ['1.5', '-0.1', 'half', '.']) expect(() => loadConfig({ SERVICE_TRACING__SAMPLE_RATIO: ratio }), ratio).toThrow(/SERVICE_TRACING__SAMPLE_RATIO/)
    expect(() => loadConfig({ SERVICE_TRACING__ENABLED: 'maybe' })).toThrow(/SERVICE_TRACING__ENABLED/)
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
