/**
 * A network is declared once (`components.schemas.Network`) as a CAIP-2 id, not as a list of chain families:
 * a rail registered on a network of another namespace answers with requirements the document admits.
 */
import { describe, expect, it } from 'vitest'
import { zNetwork } from '../../generated/gateway/zod.gen.js'

describe('the Network schema', () => {
  it('admits the networks of the table, the x402 v1 names and a CAIP-2 id of any other namespace', () => {
    for (const network of ['eip155:8453', 'eip155:1', 'algorand:wGHE2Pwdvd7S12BL5FaOP20EGYesN73ktiC1qzkkit8=', 'base', 'ethereum', 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp', 'cosmos:cosmoshub-4', 'bip122:000000000019d6689c085ae165831e93']) {
      expect(zNetwork.safeParse(network).success, network).toBe(true)
    }
  })

  it('refuses what is not a network id', () => {
    for (const network of ['', 'eip155', ':8453', 'EIP155:8453', 'ab:1', 'namespacetoolong:1', 'eip155:', 'eip155:84 53', `eip155:${'1'.repeat(65)}`, 'eip155:8453\n']) {
      expect(zNetwork.safeParse(network).success, JSON.stringify(network)).toBe(false)
    }
  })
})
