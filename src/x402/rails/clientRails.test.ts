import { describe, expect, it } from 'vitest'
import { ClientPaymentError } from './ClientRail.js'
import { clientRailFor, clientRailOptions } from './clientRails.js'

const KEY = `0x${'11'.repeat(32)}`

describe('the rails client sides', () => {
  it('are picked by the requirement network; a network no rail pays has none', () => {
    const evm = clientRailFor('eip155:8453')
    expect(evm).toBeDefined()
    expect(clientRailFor('eip155:1')).toBe(evm)
    const algorand = clientRailFor('algorand:wGHE2Pwdvd7S12BL5FaOP20EGYesN73ktiC1qzkkit8=')
    expect(algorand).toBeDefined()
    expect(algorand).not.toBe(evm)
    expect(clientRailFor('solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp')).toBeUndefined()
  })

  it('name their key options once each', () => {
    const flags = clientRailOptions().map((o) => o.flags)
    expect(flags).toEqual(expect.arrayContaining(['--key-env <name>', '--algorand-key-env <name>', '--algod <url>', '--algod-token-env <name>']))
    expect(new Set(flags).size).toBe(flags.length)
  })

  it('read the payer key from the option the user named, refusing a missing or malformed one with its failure', async () => {
    const evm = clientRailFor('eip155:8453')!
    const payer = await evm.payer({ options: { keyEnv: 'MY_KEY' }, devnet: undefined, env: { MY_KEY: KEY } })
    expect(payer.address).toMatch(/^0x[0-9a-fA-F]{40}$/)
    await expect(evm.payer({ options: { keyEnv: 'MY_KEY' }, devnet: undefined, env: {} })).rejects.toMatchObject({ failure: 'no_key', message: expect.stringContaining('MY_KEY') })
    await expect(evm.payer({ options: { keyEnv: 'MY_KEY' }, devnet: undefined, env: { MY_KEY: '0x1234' } })).rejects.toBeInstanceOf(ClientPaymentError)
    const algorand = clientRailFor('algorand:x')!
    await expect(algorand.payer({ options: { algorandKeyEnv: 'MNEMONIC' }, devnet: undefined, env: { MNEMONIC: 'not a mnemonic' } })).rejects.toMatchObject({ failure: 'bad_key' })
  })

  it('read a devnet file payer, and say when the file lists none (the key never in the message)', async () => {
    const evm = clientRailFor('eip155:8453')!
    const payer = await evm.payer({ options: {}, devnet: { path: 'd.json', file: { accounts: { evm: [{ role: 'payer', privateKey: KEY }] } } }, env: {} })
    expect(payer.address).toMatch(/^0x/)
    const refused = evm.payer({ options: {}, devnet: { path: 'd.json', file: { accounts: {} } }, env: {} })
    await expect(refused).rejects.toMatchObject({ failure: 'no_key', message: 'd.json lists no EVM payer account' })
  })
})
