import { createCipheriv, createDecipheriv, createHmac, createPublicKey, diffieHellman, generateKeyPairSync, hkdfSync, type KeyObject, randomBytes, timingSafeEqual } from 'node:crypto'

/**
 * Sending the vault's data key from an unlocked replica to a locked one through the shared database without
 * it ever being there in the clear (docs/security.md "Unlock per deployment"):
 * - each replica holds an X25519 key pair made at start and kept only in memory (`PeerKeyPair`); it
 *   publishes the public half with its heartbeat;
 * - the sender makes a one-time X25519 key pair per wrap, derives shared = X25519(one-time private, recipient
 *   public), key = HKDF-SHA256(shared, salt = one-time public ‖ recipient public, info `svc-vault/v1 peer-wrap`),
 *   and seals the data key with AES-256-GCM whose associated data names the sender, the recipient instance and
 *   both public keys: a wrap moved to another instance's row, or altered in any byte, fails authentication;
 * - only the recipient's private key opens it. Whether what it opens is the deployment's data key is checked
 *   by the vault (`Vault.adopt`, the key commitment), as anyone can seal *some* 32 bytes to a public key.
 * Public keys are the raw 32 bytes, base64url (JWK `x`).
 */
export type PeerKeyPair = { publicKey: string; privateKey: KeyObject }

export type PeerWrap = {
  sender_instance: string
  recipient_instance: string
  recipient_public_key: string
  ephemeral_public_key: string
  nonce: string
  ciphertext: string
}

const INFO = 'svc-vault/v1 peer-wrap'

export function generatePeerKeyPair(): PeerKeyPair {
  const { publicKey, privateKey } = generateKeyPairSync('x25519')
  return { publicKey: publicKey.export({ format: 'jwk' }).x!, privateKey }
}

export function wrapForPeer(p: { dataKey: Buffer; sender: string; recipient: string; recipientPublicKey: string }): PeerWrap {
  const oneTime = generatePeerKeyPair()
  const key = wrapKey(oneTime.privateKey, p.recipientPublicKey, oneTime.publicKey)
  const nonce = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, nonce)
  cipher.setAAD(associatedData(p.sender, p.recipient, p.recipientPublicKey, oneTime.publicKey))
  const sealed = Buffer.concat([cipher.update(p.dataKey), cipher.final(), cipher.getAuthTag()])
  key.fill(0)
  return {
    sender_instance: p.sender,
    recipient_instance: p.recipient,
    recipient_public_key: p.recipientPublicKey,
    ephemeral_public_key: oneTime.publicKey,
    nonce: nonce.toString('hex'),
    ciphertext: sealed.toString('hex'),
  }
}

/**
 * Opens a wrap addressed to `self` with its key pair; throws on any mismatch (another recipient, another key,
 * a changed byte). The caller zeroes the returned buffer once the vault has taken it.
 */
export function unwrapFromPeer(wrap: PeerWrap, self: { instance: string; keys: PeerKeyPair }): Buffer {
  if (wrap.recipient_instance !== self.instance || wrap.recipient_public_key !== self.keys.publicKey) throw new Error('key wrap is addressed to another replica')
  const key = wrapKey(self.keys.privateKey, wrap.ephemeral_public_key, wrap.ephemeral_public_key, self.keys.publicKey)
  try {
    const sealed = Buffer.from(wrap.ciphertext, 'hex')
    if (sealed.length !== 32 + 16) throw new Error('key wrap has the wrong length')
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(wrap.nonce, 'hex'))
    decipher.setAAD(associatedData(wrap.sender_instance, self.instance, self.keys.publicKey, wrap.ephemeral_public_key))
    decipher.setAuthTag(sealed.subarray(32))
    return Buffer.concat([decipher.update(sealed.subarray(0, 32)), decipher.final()])
  } finally {
    key.fill(0)
  }
}

/**
 * HKDF over the X25519 shared secret. The salt is always one-time public ‖ recipient public, whichever side
 * computes it (`ours` is the computing side's public key when it is the recipient).
 */
function wrapKey(privateKey: KeyObject, otherPublic: string, oneTimePublic: string, recipientPublic = otherPublic): Buffer {
  const shared = diffieHellman({ privateKey, publicKey: createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: otherPublic }, format: 'jwk' }) })
  const salt = Buffer.concat([Buffer.from(oneTimePublic, 'base64url'), Buffer.from(recipientPublic, 'base64url')])
  const key = Buffer.from(hkdfSync('sha256', shared, salt, INFO, 32))
  shared.fill(0)
  return key
}

function associatedData(sender: string, recipient: string, recipientPublic: string, oneTimePublic: string): Buffer {
  return Buffer.from(JSON.stringify([INFO, sender, recipient, recipientPublic, oneTimePublic]), 'utf8')
}

/**
 * The key that authenticates a replica's published public key: HKDF-SHA256 of the deployment's shared
 * `SHADOW_JWT_SECRET` (every replica has it; the database does not). Without it, anyone able to write the
 * database could publish a key of their own as a "replica" and be sent the data key.
 */
export function replicaAuthKey(sharedSecret: Uint8Array): Buffer {
  return Buffer.from(hkdfSync('sha256', sharedSecret, Buffer.alloc(0), 'svc-vault/v1 replica-auth', 32))
}

export function publicKeyMac(authKey: Buffer, instance: string, publicKey: string): string {
  return createHmac('sha256', authKey).update(JSON.stringify([instance, publicKey]), 'utf8').digest('hex')
}

export function publicKeyMacValid(authKey: Buffer, instance: string, publicKey: string, mac: string | null): boolean {
  if (!mac) return false
  const expected = Buffer.from(publicKeyMac(authKey, instance, publicKey), 'hex')
  const actual = Buffer.from(mac, 'hex')
  return actual.length === expected.length && timingSafeEqual(actual, expected)
}
