import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto'
import { readFile, rename } from 'node:fs/promises'
import type { Kysely } from 'kysely'
import type { Address } from 'viem'
import type { Database } from '../db/Database.js'
import { ShadowError } from '../overlord/ShadowError.js'
import { addressesEqual, parseStrictSignature, verifyOverlordSignature } from '../overlord/verifyOverlordSignature.js'

export type VaultEntryRecord = { context: string; nonce: string; ciphertext: string; created_at: number }

/** The vault's earlier file format (`<data dir>/vault.json`, one per replica): imported once by `importVaultFile`. */
export type VaultFile = {
  version: 1
  vault_id: string
  overlord_address: Address
  kdf: { alg: 'HKDF-SHA256'; salt: string; info: string }
  wrapped_data_key: { alg: 'AES-256-GCM'; nonce: string; ciphertext: string }
  entries: Record<string, VaultEntryRecord>
}

export type UnlockProof = { address?: unknown; signature?: unknown; message?: unknown }

/** The database, or a transaction of it (cabinet provision and clear write entries inside theirs). */
export type VaultDb = Kysely<Database>

export type VaultOptions = {
  db: VaultDb
  overlordAddress: () => Address | undefined
  /** The fixed, server-defined text the overlord signs to unlock (`unlockMessageFor(origin)`). */
  unlockMessage: string
  now?: () => number
  /** Called after the data key arrived or left (unlock, adoption from a peer, lock): the replica republishes. */
  onLockChange?: (unlocked: boolean) => void
}

const KDF_INFO = 'svc-vault/v1 kek'
const DATA_KEY_AAD = Buffer.from('svc-vault/v1 data-key', 'utf8')
const COMMITMENT_INFO = 'svc-vault/v1 key-commitment'
const META_ID = 'vault'

export function unlockMessageFor(origin: string): string {
  return [
    'svc-vault-reunlock/v1',
    `origin: ${origin}`,
    'This signature unwraps the sealed vault of this server. Keep it secret; sign it only for this origin.',
  ].join('\n')
}

/**
 * The sealed vault (docs/security.md), in the deployment's database:
 *
 * - Each entry (`vault_entries`) is AES-256-GCM under a 32-byte data key, with a fresh random 12-byte nonce and
 *   the entry id as associated data (an entry copied under another id fails authentication).
 * - The data key is stored only wrapped (`vault_meta`, AES-256-GCM) by a key-encryption key =
 *   HKDF-SHA256(ikm = r‖s of the overlord's signature over the fixed unlock message, salt = per-vault random
 *   32 bytes, info = `svc-vault/v1 kek`). Wallets sign deterministically (RFC 6979), so the overlord can
 *   reproduce it; the server cannot, because it never holds that signature at rest (flow A's proof file is the
 *   operator's explicit choice to trade that away).
 * - `vault_meta.key_commitment` = HMAC-SHA256(data key, `svc-vault/v1 key-commitment` ‖ vault id): a replica
 *   adopts a data key sent by a peer (`adopt`) only when it matches, so a row forged without the data key
 *   cannot make a replica use a key of the forger's choosing.
 * - Locked after every restart: the data key lives only in memory, after `unlock` or `adopt`. While locked
 *   every entry operation throws 423 `vault_locked`.
 * - The first successful unlock of a deployment with no vault initialises it (two replicas racing: one insert
 *   wins, the other unwraps the winner's header with the same deterministic signature).
 */
export class Vault {
  readonly unlockMessage: string
  readonly #db: VaultDb
  readonly #overlord: () => Address | undefined
  readonly #now: () => number
  readonly #onLockChange: ((unlocked: boolean) => void) | undefined
  #dataKey: Buffer | undefined
  #vaultId: string | undefined

  constructor(options: VaultOptions) {
    this.#db = options.db
    this.unlockMessage = options.unlockMessage
    this.#overlord = options.overlordAddress
    this.#now = options.now ?? (() => Math.floor(Date.now() / 1000))
    this.#onLockChange = options.onLockChange
  }

  isUnlocked(): boolean {
    return this.#dataKey !== undefined
  }

  /** Forgets the data key (a restart does the same). */
  lock(): void {
    const was = this.isUnlocked()
    this.#dataKey?.fill(0)
    this.#dataKey = undefined
    this.#vaultId = undefined
    if (was) this.#onLockChange?.(false)
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
    try {
      let initialised = false
      let meta = await this.#readMeta()
      if (!meta) {
        const dataKey = randomBytes(32)
        const salt = randomBytes(32)
        const kek = deriveKek(ikm, salt)
        const nonce = randomBytes(12)
        const vaultId = randomBytes(16).toString('hex')
        const row = {
          id: META_ID,
          vault_id: vaultId,
          overlord_address: overlord,
          kdf_salt: salt.toString('hex'),
          kdf_info: KDF_INFO,
          wrapped_nonce: nonce.toString('hex'),
          wrapped_ciphertext: seal(kek, nonce, dataKey, DATA_KEY_AAD).toString('hex'),
          key_commitment: keyCommitment(dataKey, vaultId),
          created_at: this.#now(),
        }
        kek.fill(0)
        dataKey.fill(0)
        const inserted = await this.#db.insertInto('vault_meta').values(row).onConflict((oc) => oc.column('id').doNothing()).executeTakeFirst()
        initialised = Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1
        meta = await this.#readMeta()
        if (!meta) throw new Error('vault header vanished after its insert')
      }
      const kek = deriveKek(ikm, Buffer.from(meta.kdf_salt, 'hex'))
      let dataKey: Buffer
      try {
        dataKey = open(kek, Buffer.from(meta.wrapped_nonce, 'hex'), Buffer.from(meta.wrapped_ciphertext, 'hex'), DATA_KEY_AAD)
      } catch {
        throw new ShadowError('vault_unlock_failed', 'The signature does not unwrap this vault (was it initialised by another overlord key?).')
      } finally {
        kek.fill(0)
      }
      if (meta.key_commitment === PENDING_COMMITMENT) {
        // an imported file's header: only now, with the data key, can its commitment be written
        await this.#db
          .updateTable('vault_meta')
          .set({ key_commitment: keyCommitment(dataKey, meta.vault_id) })
          .where('id', '=', META_ID)
          .where('key_commitment', '=', PENDING_COMMITMENT)
          .execute()
      }
      this.#set(dataKey, meta.vault_id)
      return { vault_unlocked: true, initialised }
    } finally {
      ikm.fill(0)
    }
  }

  /**
   * Takes a data key a peer replica sent (already unwrapped by the caller). Refused (false, nothing changes)
   * unless it matches the vault's key commitment: only a holder of the real data key can make one that does.
   */
  async adopt(candidate: Buffer): Promise<boolean> {
    const meta = await this.#readMeta()
    if (!meta || candidate.length !== 32) return false
    const expected = Buffer.from(meta.key_commitment, 'hex')
    const actual = Buffer.from(keyCommitment(candidate, meta.vault_id), 'hex')
    if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) return false
    this.#set(Buffer.from(candidate), meta.vault_id)
    return true
  }

  /** Lends the data key to `use` (wrapping it to a peer); 423 while locked. The caller must not keep it. */
  withDataKey<T>(use: (dataKey: Buffer, vaultId: string) => T): T {
    this.#unlocked()
    return use(this.#dataKey!, this.#vaultId!)
  }

  /** Throws 423 `vault_locked` unless unlocked (checked before anything else touches the vault). */
  requireUnlocked(): void {
    this.#unlocked()
  }

  /** Entry ids, optionally under a prefix. */
  async list(prefix = '', db: VaultDb = this.#db): Promise<string[]> {
    this.#unlocked()
    const rows = await db.selectFrom('vault_entries').select('entry_id').orderBy('entry_id').execute()
    return rows.map((r) => r.entry_id).filter((id) => id.startsWith(prefix))
  }

  async has(id: string): Promise<boolean> {
    return (await this.context(id)) !== undefined
  }

  async context(id: string): Promise<string | undefined> {
    this.#unlocked()
    const row = await this.#db.selectFrom('vault_entries').select('context').where('entry_id', '=', id).executeTakeFirst()
    return row?.context
  }

  /** Seals and writes one entry (replacing one of the same id); `db` is the caller's transaction, if any. */
  async put(id: string, plaintext: Uint8Array | string, context: string, db: VaultDb = this.#db): Promise<void> {
    this.#unlocked()
    const nonce = randomBytes(12)
    const bytes = typeof plaintext === 'string' ? Buffer.from(plaintext, 'utf8') : Buffer.from(plaintext)
    const record = {
      context,
      nonce: nonce.toString('hex'),
      ciphertext: seal(this.#dataKey!, nonce, bytes, Buffer.from(id, 'utf8')).toString('hex'),
      created_at: this.#now(),
    }
    bytes.fill(0)
    await db
      .insertInto('vault_entries')
      .values({ entry_id: id, ...record })
      .onConflict((oc) => oc.column('entry_id').doUpdateSet(record))
      .execute()
  }

  async delete(id: string, db: VaultDb = this.#db): Promise<boolean> {
    this.#unlocked()
    const result = await db.deleteFrom('vault_entries').where('entry_id', '=', id).executeTakeFirst()
    return Number(result.numDeletedRows) > 0
  }

  /**
   * Decrypts one entry into a buffer that exists only for the duration of `use` and is zeroed afterwards.
   * Undefined when the entry does not exist.
   */
  async withSecret<T>(id: string, use: (plaintext: Buffer) => Promise<T> | T): Promise<T | undefined> {
    this.#unlocked()
    const record = await this.#db.selectFrom('vault_entries').select(['nonce', 'ciphertext']).where('entry_id', '=', id).executeTakeFirst()
    if (!record) return undefined
    const key = this.#unlocked()
    const plaintext = open(key, Buffer.from(record.nonce, 'hex'), Buffer.from(record.ciphertext, 'hex'), Buffer.from(id, 'utf8'))
    try {
      return await use(plaintext)
    } finally {
      plaintext.fill(0)
    }
  }

  #set(dataKey: Buffer, vaultId: string): void {
    const was = this.isUnlocked()
    this.#dataKey?.fill(0)
    this.#dataKey = dataKey
    this.#vaultId = vaultId
    if (!was) this.#onLockChange?.(true)
  }

  #unlocked(): Buffer {
    if (!this.#dataKey) throw new ShadowError('vault_locked', 'The vault is sealed; unlock it with POST /vault/credentials/reunlock.')
    return this.#dataKey
  }

  #readMeta() {
    return this.#db.selectFrom('vault_meta').selectAll().where('id', '=', META_ID).executeTakeFirst()
  }
}

/**
 * Imports the `vault.json` of the earlier file-based vault into an empty database (first start after the upgrade),
 * as it is: the header and every entry stay sealed (the import needs no unlock; entry ids are the associated data,
 * unchanged). The commitment needs the data key, which the import does not have: it is written at the first unlock
 * (`Vault.unlock`). Returns the number of entries imported; 0 when the database already has a vault or there is no
 * file. The file is renamed `<path>.imported` afterwards, never deleted.
 */
export async function importVaultFile(db: VaultDb, path: string): Promise<number> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0
    throw error
  }
  const file = JSON.parse(text) as VaultFile
  const imported = await db.transaction().execute(async (trx) => {
    const existing = await trx.selectFrom('vault_meta').select('id').where('id', '=', META_ID).executeTakeFirst()
    if (existing) return -1
    await trx
      .insertInto('vault_meta')
      .values({
        id: META_ID,
        vault_id: file.vault_id,
        overlord_address: file.overlord_address,
        kdf_salt: file.kdf.salt,
        kdf_info: file.kdf.info,
        wrapped_nonce: file.wrapped_data_key.nonce,
        wrapped_ciphertext: file.wrapped_data_key.ciphertext,
        key_commitment: PENDING_COMMITMENT,
        created_at: Math.floor(Date.now() / 1000),
      })
      .execute()
    const entries = Object.entries(file.entries ?? {})
    for (const [entry_id, r] of entries) {
      await trx.insertInto('vault_entries').values({ entry_id, context: r.context, nonce: r.nonce, ciphertext: r.ciphertext, created_at: r.created_at }).execute()
    }
    return entries.length
  })
  if (imported < 0) return 0
  await rename(path, `${path}.imported`)
  return imported
}

/** An imported header's commitment until the first unlock computes it: matches no key (not hex). */
const PENDING_COMMITMENT = 'pending'

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

function keyCommitment(dataKey: Buffer, vaultId: string): string {
  return createHmac('sha256', dataKey).update(`${COMMITMENT_INFO}\n${vaultId}`, 'utf8').digest('hex')
}
