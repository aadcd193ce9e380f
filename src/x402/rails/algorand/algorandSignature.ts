import { createPublicKey, verify } from 'node:crypto'
import algosdk from 'algosdk'

/**
 * Whether a signed Algorand transaction carries a valid signature of its authorizer (the `sgnr` auth address,
 * else the sender), checked here rather than taken from the node's word: an ed25519 signature over
 * "TX" ‖ the transaction, or a multisig whose address is the authorizer's and whose threshold of subsignatures
 * verify. A logic signature (a program decides) or a post-quantum one cannot be checked here: `unverifiable`.
 */
export function algorandSignatureVerdict(stxn: algosdk.SignedTransaction): 'valid' | 'invalid' | 'unverifiable' {
  const authorizer = stxn.sgnr ?? stxn.txn.sender
  const message = stxn.txn.bytesToSign()
  if (stxn.sig) return ed25519Valid(authorizer.publicKey, message, stxn.sig) ? 'valid' : 'invalid'
  if (stxn.msig) {
    try {
      return algosdk.verifyMultisig(message, stxn.msig, authorizer.publicKey) ? 'valid' : 'invalid'
    } catch {
      return 'invalid'
    }
  }
  if (stxn.lsig || stxn.pqsig) return 'unverifiable'
  return 'invalid'
}

function ed25519Valid(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (signature.length !== 64 || publicKey.length !== 32) return false
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey).toString('base64url') }, format: 'jwk' })
  return verify(null, message, key, signature)
}
