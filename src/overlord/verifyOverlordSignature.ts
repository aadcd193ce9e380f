import { timingSafeEqual } from 'node:crypto'
import { type Address, type Hex, recoverMessageAddress } from 'viem'

/** secp256k1 group order n, and n/2: signatures with s > n/2 are the malleable twin and are rejected. */
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
const HALF_N = SECP256K1_N >> 1n

export type ParsedSignature = { r: bigint; s: bigint; yParity: 0 | 1; hex: Hex }

/**
 * Strictly parses a 65-byte `0x` hex signature `r || s || v` (v ∈ {27, 28, 0, 1}); rejects r or s outside
 * [1, n-1] and high-s (s > n/2, the malleable form). Returns undefined when not acceptable.
 */
export function parseStrictSignature(signature: unknown): ParsedSignature | undefined {
  if (typeof signature !== 'string' || !/^0x[0-9a-fA-F]{130}$/.test(signature)) return undefined
  const r = BigInt(`0x${signature.slice(2, 66)}`)
  const s = BigInt(`0x${signature.slice(66, 130)}`)
  const v = Number.parseInt(signature.slice(130, 132), 16)
  if (r === 0n || r >= SECP256K1_N || s === 0n || s > HALF_N) return undefined
  const yParity = v === 27 || v === 0 ? 0 : v === 28 || v === 1 ? 1 : undefined
  if (yParity === undefined) return undefined
  return { r, s, yParity, hex: signature.toLowerCase() as Hex }
}

/** Constant-time comparison of two addresses on their 20 normalised bytes. */
export function addressesEqual(a: string, b: string): boolean {
  const left = addressBytes(a)
  const right = addressBytes(b)
  if (!left || !right) return false
  return timingSafeEqual(left, right)
}

function addressBytes(address: string): Buffer | undefined {
  if (!/^0x[0-9a-fA-F]{40}$/.test(address)) return undefined
  return Buffer.from(address.slice(2).toLowerCase(), 'hex')
}

/**
 * True when `signature` is a strict (low-s) EIP-191 personal-message signature of `message` that recovers
 * to `expected`. Never throws on malformed input.
 */
export async function verifyOverlordSignature(message: string, signature: unknown, expected: Address): Promise<boolean> {
  const parsed = parseStrictSignature(signature)
  if (!parsed) return false
  let recovered: Address
  try {
    recovered = await recoverMessageAddress({ message, signature: parsed.hex })
  } catch {
    return false
  }
  return addressesEqual(recovered, expected)
}
