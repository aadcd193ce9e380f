import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { anvilAccount } from './accounts.js'
import { devnetTable } from './devnetTable.js'
import type { DevnetInfo } from './startDevnet.js'

const algorandAddress = 'A'.repeat(58)
const overlordKey = `0x${'ab'.repeat(32)}` as const
const payers = [2, 3, 4, 5].map((index) => ({ role: 'payer', index, address: anvilAccount(index).address, privateKey: anvilAccount(index).privateKey, usdc: '1000000000000' }))
const info = {
  dataDir: join(process.cwd(), 'data'),
  evm: true,
  chains: {
    'eip155:8453': { rpcUrl: 'http://127.0.0.1:8545', usdc: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' },
    'eip155:1': { rpcUrl: 'http://127.0.0.1:8546', usdc: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48' },
  },
  facilitator: { url: 'http://127.0.0.1:8402', token: 'f'.repeat(48) },
  storage: { paymentUrl: 'http://127.0.0.1:8403', gatewayUrl: 'http://127.0.0.1:8404', blockIntervalMs: 2000 },
  algorand: { url: 'http://127.0.0.1:8405', token: 'a'.repeat(64), network: `algorand:${'G'.repeat(44)}`, usdcAsaId: 1001, otherAsaId: 1002 },
  service: { payToEvm: anvilAccount(7).address, payToAlgorand: algorandAddress, arweaveAddress: 'w'.repeat(43), arweaveJwkPath: join(process.cwd(), 'data/devnet/arweave-jwk.json') },
  shadow: { overlord: { address: anvilAccount(8).address, privateKey: overlordKey, testKey: true } },
  accounts: { evm: [{ role: 'token-owner', index: 0, address: anvilAccount(0).address, privateKey: anvilAccount(0).privateKey, usdc: '0' }, ...payers], algorand: [{ role: 'payer', address: algorandAddress, mnemonic: 'word '.repeat(25).trim(), usdc: '1000000000' }] },
} as unknown as DevnetInfo

describe('devnetTable', () => {
  const table = devnetTable(info)
  const lines = table.split('\n')

  it('fits an 80-column terminal: no line wraps, a long data directory included', () => {
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(79)
    const deep = devnetTable({ ...info, dataDir: '/tmp/a-rather-long-directory-name-for-the-data/of-this-machine' })
    for (const line of deep.split('\n')) expect(line.length, line).toBeLessThanOrEqual(79)
    expect(deep).toContain('\n  /tmp/a-rather-long-directory-name-for-the-data/of-this-machine/devnet.json\n')
  })

  it("prints each funded EVM payer's key in full, numbered from #1 with the Anvil account beside, as TEST keys", () => {
    const at = lines.findIndex((l) => l.startsWith('funded test payers'))
    expect(lines[at]).toMatch(/TEST keys of this devnet only, never use them elsewhere/)
    const first = lines.findIndex((l) => l.includes('EVM payer #1'))
    expect(first).toBeGreaterThan(at)
    expect(lines.slice(first, first + 3)).toEqual([
      `  EVM payer #1 (Anvil #2)   ${anvilAccount(2).address}`,
      `    key ${anvilAccount(2).privateKey}`,
      '    1,000,000 USDC on each chain',
    ])
    expect(lines.filter((l) => /^ {2}EVM payer #\d/.test(l)).map((l) => l.slice(2, 25).trim())).toEqual(['EVM payer #1 (Anvil #2)', 'EVM payer #2 (Anvil #3)', 'EVM payer #3 (Anvil #4)', 'EVM payer #4 (Anvil #5)'])
    for (const p of payers) expect(table).toContain(`key ${p.privateKey}`)
  })

  it("names each peer's URL; keys and tokens nobody types stay in devnet.json, which it names", () => {
    for (const url of ['http://127.0.0.1:8545', 'http://127.0.0.1:8546', 'http://127.0.0.1:8402', 'http://127.0.0.1:8403', 'http://127.0.0.1:8404', 'http://127.0.0.1:8405']) expect(table).toContain(url)
    expect(lines[0]).toBe('devnet peers (their tokens and the other keys: data/devnet.json)')
    expect(table).toContain(`  admin overlord (TEST key) ${anvilAccount(8).address}`)
    expect(table).not.toContain(overlordKey)
    expect(table).not.toContain(info.algorand.token)
    expect(table).not.toContain(info.facilitator.token)
    expect(table).not.toContain('word word')
    expect(table).not.toContain(anvilAccount(0).privateKey) // the token owner is no payer
    // a value too wide for the right-hand column: on a line of its own
    expect(table).toContain(`  pay-to, Algorand\n    ${algorandAddress}\n`)
  })
})
