import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { weakSecretProblem } from '../shared/assessSecret.js'
import { ConfigError } from './ConfigError.js'
import { loadConfig } from './loadConfig.js'

const hex = (bytes: number[]) => Buffer.from(bytes).toString('hex')

describe('weakSecretProblem', () => {
  it('refuses typed and patterned secrets, hex or text', () => {
    const weak: Array<[string, RegExp]> = [
      [Buffer.from('my-company-jwt-secret-2024-prod!').toString('hex'), /hex of text/],
      [hex(Array.from({ length: 32 }, (_, i) => i)), /counting sequence/],
      [hex(Array.from({ length: 32 }, (_, i) => 255 - i)), /counting sequence/],
      ['ab'.repeat(32), /too few byte values/],
      ['deadbeef'.repeat(8), /too few byte values|short pattern/],
      ['my-company-jwt-secret-2024-prod!', /passphrase/],
      ['correct horse battery staple orange', /passphrase/],
      ['storage-test-token', /too short/],
      ['hunter2', /too short/],
      ['x'.repeat(64), /too few characters|short pattern/],
      ['Ab1!'.repeat(12), /too few characters|short pattern/],
    ]
    for (const [secret, why] of weak) expect(weakSecretProblem(secret), secret).toMatch(why)
  })

  it('passes generated secrets: hex (16 and 32 bytes), base64, base64url, base62', () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
    for (let i = 0; i < 2000; i++) {
      expect(weakSecretProblem(randomBytes(32).toString('hex'))).toBeUndefined()
      expect(weakSecretProblem(randomBytes(16).toString('hex'))).toBeUndefined()
      expect(weakSecretProblem(randomBytes(32).toString('base64'))).toBeUndefined()
      expect(weakSecretProblem(randomBytes(32).toString('base64url'))).toBeUndefined()
      expect(weakSecretProblem(Array.from(randomBytes(32), (b) => alphabet[b % 62]).join(''))).toBeUndefined()
    }
  })
})

describe('every secret the gateway reads is checked at start', () => {
  it('FACILITATOR_TOKEN and SERVICE_GATE__IP_HASH_SALT: a typed value is a ConfigError naming the variable and how to make one, never echoing it', () => {
    for (const name of ['FACILITATOR_TOKEN', 'SERVICE_GATE__IP_HASH_SALT']) {
      for (const value of ['my-company-jwt-secret-2024-prod!', hex(Array.from({ length: 32 }, (_, i) => i))]) {
        let error: unknown
        try {
          loadConfig({ [name]: value })
        } catch (e) {
          error = e
        }
        expect(error, `${name}=${value}`).toBeInstanceOf(ConfigError)
        expect((error as ConfigError).variable).toBe(name)
        expect((error as Error).message).toContain('openssl rand -hex 32')
        expect((error as Error).message).not.toContain(value)
      }
      const strong = randomBytes(32).toString('hex')
      expect(() => loadConfig({ [name]: strong })).not.toThrow()
    }
    expect(loadConfig({}).ipHashSalt).toBeUndefined()
  })
})
