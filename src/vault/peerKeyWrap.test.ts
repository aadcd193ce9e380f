import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { generatePeerKeyPair, unwrapFromPeer, wrapForPeer } from './peerKeyWrap.js'

describe('peerKeyWrap (unlock per deployment)', () => {
  const dataKey = randomBytes(32)
  const b = generatePeerKeyPair()
  const wrap = () => wrapForPeer({ dataKey, sender: 'gw-a', recipient: 'gw-b', recipientPublicKey: b.publicKey })

  it('only the recipient opens it, and gets the data key back', () => {
    expect(unwrapFromPeer(wrap(), { instance: 'gw-b', keys: b }).equals(dataKey)).toBe(true)
    const w = wrap()
    expect(w.ciphertext).not.toContain(dataKey.toString('hex'))
    expect(JSON.stringify(w)).not.toContain(dataKey.toString('base64url'))
  })

  it('refuses a wrap for another instance id, another key, or with any byte changed', () => {
    const c = generatePeerKeyPair()
    // moved to C's row (instance and public key rewritten): the associated data names B
    expect(() => unwrapFromPeer({ ...wrap(), recipient_instance: 'gw-c', recipient_public_key: c.publicKey }, { instance: 'gw-c', keys: c })).toThrow()
    // B's wrap read by B under another id
    expect(() => unwrapFromPeer({ ...wrap(), recipient_instance: 'gw-c' }, { instance: 'gw-c', keys: b })).toThrow()
    // a changed sender name
    expect(() => unwrapFromPeer({ ...wrap(), sender_instance: 'gw-x' }, { instance: 'gw-b', keys: b })).toThrow()
    // a flipped ciphertext bit, a changed one-time key
    const w = wrap()
    const flipped = Buffer.from(w.ciphertext, 'hex')
    flipped[3]! ^= 1
    expect(() => unwrapFromPeer({ ...w, ciphertext: flipped.toString('hex') }, { instance: 'gw-b', keys: b })).toThrow()
    expect(() => unwrapFromPeer({ ...w, ephemeral_public_key: generatePeerKeyPair().publicKey }, { instance: 'gw-b', keys: b })).toThrow()
    // the right instance, a key pair made after the wrap (a restarted replica)
    expect(() => unwrapFromPeer({ ...w, recipient_public_key: c.publicKey }, { instance: 'gw-b', keys: c })).toThrow()
  })
})
