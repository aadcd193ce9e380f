import { describe, expect, it } from 'vitest'
import { anvilAccount } from './accounts.js'
import { devnetTable, type DevnetInfo } from './startDevnet.js'

describe('devnetTable', () => {
  it('numbers the funded payers from #1, as a reader counts them, with the Anvil account beside', () => {
    const chain = { rpcUrl: 'http://127.0.0.1:8545', usdc: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' }
    const payers = [2, 3, 4, 5].map((index) => ({ role: 'payer', index, address: anvilAccount(index).address, privateKey: anvilAccount(index).privateKey, usdc: '1000000000' }))
    const info = {
      chains: { 'eip155:8453': chain, 'eip155:1': chain },
      facilitator: { url: 'http://127.0.0.1:8402', token: 't' },
      storage: { paymentUrl: 'http://127.0.0.1:8403', gatewayUrl: 'http://127.0.0.1:8404', blockIntervalMs: 1000 },
      algorand: { url: 'http://127.0.0.1:8405', token: 'a'.repeat(64), network: 'algorand:x', usdcAsaId: 1, otherAsaId: 2 },
      service: { payToEvm: '0x1', payToAlgorand: 'A', arweaveAddress: 'w', arweaveJwkPath: '/tmp/jwk.json' },
      shadow: { overlord: { address: '0x2', privateKey: '0x3' } },
      accounts: { evm: payers, algorand: [] },
    } as unknown as DevnetInfo
    const rows = devnetTable(info).split('\n').filter((l) => l.includes('EVM payer'))
    expect(rows.map((r) => r.split('|')[1]!.trim())).toEqual(['EVM payer #1 (Anvil #2)', 'EVM payer #2 (Anvil #3)', 'EVM payer #3 (Anvil #4)', 'EVM payer #4 (Anvil #5)'])
    expect(rows[0]).toContain(anvilAccount(2).address)
  })
})
