import { constants, createPrivateKey, type JsonWebKey, type KeyObject, sign } from 'node:crypto'

/** What signs an ANS-104 data item: its signature type, its owner field and the signature over a deep hash. */
export type DataItemSigner = {
  /** 1 = Arweave (RSA-PSS, 4096-bit key, SHA-256): the only type this service signs with. */
  readonly signatureType: number
  /** The owner field: the RSA modulus, 512 bytes. */
  readonly publicKey: Buffer
  sign(message: Uint8Array): Promise<Uint8Array> | Uint8Array
}

/**
 * An Arweave wallet key (a JWK with the private RSA parts) as a data-item signer: RSA-PSS over SHA-256 with the
 * largest salt, as Arweave's own JavaScript client signs (verifiers detect the salt length).
 */
export class ArweaveSigner implements DataItemSigner {
  readonly signatureType = 1
  readonly publicKey: Buffer
  readonly #key: KeyObject

  constructor(jwk: JsonWebKey) {
    if (jwk.kty !== 'RSA' || typeof jwk.n !== 'string' || typeof jwk.d !== 'string') throw new Error('an Arweave key is an RSA JWK with its private parts (n, d, …)')
    this.#key = createPrivateKey({ key: jwk, format: 'jwk' })
    this.publicKey = Buffer.from(jwk.n, 'base64url')
    if (this.publicKey.length !== 512) throw new Error(`an Arweave key is 4096-bit RSA; this one is ${this.publicKey.length * 8}-bit`)
  }

  sign(message: Uint8Array): Uint8Array {
    return sign('sha256', message, { key: this.#key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_MAX_SIGN })
  }
}
