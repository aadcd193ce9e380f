import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'
import { readFile, rm } from 'node:fs/promises'
import type { Address } from 'viem'
import { ShadowError } from '../overlord/ShadowError.js'
import { addressesEqual, parseStrictSignature, verifyOverlordSignature } from '../overlord/verifyOverlordSignature.js'
import { writeFileAtomic } from './writeFileAtomic.js'

/**
 * The sealed vault (docs/security.md): one JSON file in the data dir.
 *
 * - Each entry is AES-256-GCM under a 32-byte data key, with a fresh random 12-byte nonce and the entry id
 *   as associated data (an entry copied under another id fails authentication).
 * - The data key is stored only wrapped (AES-256-GCM) by a key-encryption key = HKDF-SHA256(ikm = r‖s of
 *   the overlord's signature over the fixed unlock message, salt = per-vault random 32 bytes, info =
 *   `svc-vault/v1 kek`). Wallets sign deterministically (RFC 6979), so the overlord can reproduce it; the
 *   server cannot, because it never holds that signature at rest (flow A's proof file is the operator's
 *   explicit choice to trade that away).
 * - Locked after every restart: the data key lives only in memory and only after `unlock`. While locked every
 *   entry operation throws 423 `vault_locked`.
 * - The first successful unlock of a server with no vault file initialises the vault.
 */
export type VaultEntryRecord = { context: string; nonce: string; ciphertext: string; created_at: number }

export type VaultFile = {
  version: 1
  vault_id: string
  overlord_address: Address
  kdf: { alg: 'HKDF-SHA256'; salt: string; info: string }
  wrapped_data_key: { alg: 'AES-256-GCM'; nonce: string; ciphertext: string }
  entries: Record<string, VaultEntryRecord>
}

export type UnlockProof = { address?: unknown; signature?: unknown; message?: unknown }

export type VaultOptions = {
  path: string
  overlordAddress: () => Address | undefined
  /** The fixed, server-defined text the overlord signs to unlock (`unlockMessageFor(origin)`). */
  unlockMessage: string
  now?: () => number
}

const KDF_INFO = 'svc-vault/v1 kek'
const DATA_KEY_AAD = Buffer.from('svc-vault/v1 data-key', 'utf8')

export function unlockMessageFor(origin: string): string {
  return [
    'svc-vault-reunlock/v1',
    `origin: ${origin}`,
    'This signature unwraps the sealed vault of this server. Keep it secret; sign it only for this origin.',
  ].join('\n')
}

export class Vault {
  readonly path: string
  readonly unlockMessage: string
  readonly #overlord: () => Address | undefined
  readonly #now: () => number
  #dataKey: Buffer | undefined
  #file: VaultFile | undefined

  constructor(options: VaultOptions) {
    this.path = options.path
    this.unlockMessage = options.unlockMessage
    this.#overlord = options.overlordAddress
    this.#now = options.now ?? (() => Math.floor(Date.now() / 1000))
  }

  isUnlocked(): boolean {
    return this.#dataKey !== undefined
  }

  /** Forgets the data key (a restart does the same). */
  lock(): void {
    this.#dataKey?.fill(0)
    this.#dataKey = undefined
    this.#file = undefined
  }

  /**
   * Flow A and flow B both end here. 400 when the message is not the server's unlock message, 403
   * `bad_signature` when the signature is malformed, high-s or does not recover to the overlord (the claimed
   * address must be the overlord's too), 403 `vault_unlock_failed` when it recovers but does not unwrap the
   * data key (another vault's signature). A correct proof on an unlocked vault is a no-op.
   */
  async unlock(proof: UnlockProof): Promise<{ vault_unlocked: true; initialised: boolean }> {
    const overlord = this.#overlord()
    if (!overlord) throw new ShadowError('overlord_not_configured', 'The shadow-overlord address is not configured on this server.')
    if (proof.message !== this.unlockMessage) {
      throw new ShadowError('unlock_message_mismatch', 'message must be exactly the server unlock message.')
    }
    if (typeof proof.address !== 'string' || !addressesEqual(proof.address, overlord)) {
      throw new ShadowError('bad_signature', 'address is not the overlord address.')
    }
    const parsed = parseStrictSignature(proof.signature)
    if (!parsed || !(await verifyOverlordSignature(this.unlockMessage, parsed.hex, overlord))) {
      throw new ShadowError('bad_signature', 'The signature does not recover to the overlord address.')
    }
    const ikm = Buffer.concat([bigintTo32(parsed.r), bigintTo32(parsed.s)])
    const existing = await this.#readFile()
    if (!existing) {
      const dataKey = randomBytes(32)
      const salt = randomBytes(32)
      const kek = deriveKek(ikm, salt)
      const nonce = randomBytes(12)
      const file: VaultFile = {
        version: 1,
        vault_id: randomBytes(16).toString('hex'),
        overlord_address: overlord,
        kdf: { alg: 'HKDF-SHA256', salt: salt.toString('hex'), info: KDF_INFO },
        wrapped_data_key: { alg: 'AES-256-GCM', nonce: nonce.toString('hex'), ciphertext: seal(kek, nonce, dataKey, DATA_KEY_AAD).toString('hex') },
        entries: {},
      }
      kek.fill(0)
      ikm.fill(0)
      await writeFileAtomic(this.path, serialise(file))
      this.#file = file
      this.#dataKey?.fill(0)
      this.#dataKey = dataKey
      return { vault_unlocked: true, initialised: true }
    }
    const kek = deriveKek(ikm, Buffer.from(existing.kdf.salt, 'hex'))
    ikm.fill(0)
    let dataKey: Buffer
    try {
      dataKey = open(kek, Buffer.from(existing.wrapped_data_key.nonce, 'hex'), Buffer.from(existing.wrapped_data_key.ciphertext, 'hex'), DATA_KEY_AAD)
    } catch {
      throw new ShadowError('vault_unlock_failed', 'The signature does not unwrap this vault (was it initialised by another overlord key?).')
    } finally {
      kek.fill(0)
    }
    this.#dataKey?.fill(0)
    this.#dataKey = dataKey
    this.#file = existing
    return { vault_unlocked: true, initialised: false }
  }

  /** Entry ids, optionally under a prefix. */
  list(prefix = ''): string[] {
    return Object.keys(this.#unlocked().entries)
      .filter((id) => id.startsWith(prefix))
      .sort()
  }

  has(id: string): boolean {
    return Object.hasOwn(this.#unlocked().entries, id)
  }

  context(id: string): string | undefined {
    const entries = this.#unlocked().entries
    return Object.hasOwn(entries, id) ? entries[id]!.context : undefined
  }

  async put(id: string, plaintext: Uint8Array | string, context: string): Promise<void> {
    const file = this.#unlocked()
    const nonce = randomBytes(12)
    const bytes = typeof plaintext === 'string' ? Buffer.from(plaintext, 'utf8') : Buffer.from(plaintext)
    const record: VaultEntryRecord = {
      context,
      nonce: nonce.toString('hex'),
      ciphertext: seal(this.#dataKey!, nonce, bytes, Buffer.from(id, 'utf8')).toString('hex'),
      created_at: this.#now(),
    }
    bytes.fill(0)
    await this.#commit({ ...file, entries: { ...file.entries, [id]: record } })
  }

  async delete(id: string): Promise<boolean> {
    const file = this.#unlocked()
    if (!Object.hasOwn(file.entries, id)) return false
    const entries = { ...file.entries }
    delete entries[id]
    await this.#commit({ ...file, entries })
    return true
  }

  /**
   * Decrypts one entry into a buffer that exists only for the duration of `use` and is zeroed afterwards.
   * Undefined when the entry does not exist.
   */
  async withSecret<T>(id: string, use: (plaintext: Buffer) => Promise<T> | T): Promise<T | undefined> {
    const entries = this.#unlocked().entries
    const record = Object.hasOwn(entries, id) ? entries[id] : undefined
    if (!record) return undefined
    const plaintext = open(this.#dataKey!, Buffer.from(record.nonce, 'hex'), Buffer.from(record.ciphertext, 'hex'), Buffer.from(id, 'utf8'))
    try {
      return await use(plaintext)
    } finally {
      plaintext.fill(0)
    }
  }

  /** Raw file bytes (or null when absent) — the pre-operation snapshot used by cabinet rollbacks. */
  async snapshot(): Promise<string | null> {
    this.#unlocked()
    try {
      return await readFile(this.path, 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw error
    }
  }

  async restore(snapshot: string | null): Promise<void> {
    if (snapshot === null) {
      await rm(this.path, { force: true })
      this.lock()
      return
    }
    await writeFileAtomic(this.path, snapshot)
    if (this.#dataKey) this.#file = JSON.parse(snapshot) as VaultFile
  }

  #unlocked(): VaultFile {
    if (!this.#dataKey || !this.#file) throw new ShadowError('vault_locked', 'The vault is sealed; unlock it with POST /vault/credentials/reunlock.')
    return this.#file
  }

  async #commit(file: VaultFile): Promise<void> {
    await writeFileAtomic(this.path, serialise(file))
    this.#file = file
  }

  async #readFile(): Promise<VaultFile | undefined> {
    let text: string
    try {
      text = await readFile(this.path, 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw error
    }
    return JSON.parse(text) as VaultFile
  }
}

/** Reads a flow-A proof file `{address, signature, message}`; 400 `unlock_proof_missing` when absent/unreadable. */
export async function readUnlockProof(path: string): Promise<UnlockProof> {
  try {
    const parsed = JSON.parse(await readFile(path, 'utf8')) as unknown
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as UnlockProof
  } catch {
    // fall through: never echo the file's content
  }
  throw new ShadowError('unlock_proof_missing', 'No readable unlock proof file is configured on the server; send {address, signature, message}.')
}

function deriveKek(ikm: Buffer, salt: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', ikm, salt, KDF_INFO, 32))
}

function seal(key: Buffer, nonce: Buffer, plaintext: Buffer, aad: Buffer): Buffer {
  const cipher = createCipheriv('aes-256-gcm', key, nonce)
  cipher.setAAD(aad)
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()])
  return Buffer.concat([body, cipher.getAuthTag()])
}

function open(key: Buffer, nonce: Buffer, sealed: Buffer, aad: Buffer): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', key, nonce)
  decipher.setAAD(aad)
  decipher.setAuthTag(sealed.subarray(sealed.length - 16))
  return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - 16)), decipher.final()])
}

function bigintTo32(value: bigint): Buffer {
  return Buffer.from(value.toString(16).padStart(64, '0'), 'hex')
}

function serialise(file: VaultFile): string {
  return `${JSON.stringify(file, null, 2)}\n`
}
