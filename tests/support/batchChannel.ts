import type { Channel } from '@x402/evm/batch-settlement/server'

/** A test address: `n` in the last bytes. */
const testAddress = (n: number): `0x${string}` => `0x${n.toString(16).padStart(40, '0')}`

/**
 * A `batch-settlement` channel record as the gateway stores it (1,000,000 deposited, nothing claimed), for the
 * tests of its storage and of the charges made on it; `payer` authorises its vouchers.
 */
export function channelRecord(o: { channelId: string; payer?: `0x${string}`; charged?: string }): Channel {
  const payer = o.payer ?? testAddress(1)
  const charged = o.charged ?? '0'
  return {
    channelId: o.channelId,
    channelConfig: { payer, payerAuthorizer: payer, receiver: testAddress(2), receiverAuthorizer: testAddress(3), token: testAddress(4), withdrawDelay: 900, salt: `0x${'0'.repeat(64)}` },
    chargedCumulativeAmount: charged,
    signedMaxClaimable: charged,
    signature: '0x',
    balance: '1000000',
    totalClaimed: '0',
    withdrawRequestedAt: 0,
    refundNonce: 0,
    lastRequestTimestamp: Date.now(),
  }
}
