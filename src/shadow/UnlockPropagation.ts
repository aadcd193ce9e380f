import type { Kysely } from 'kysely'
import type { ChangeFeed } from '../cache/ChangeFeed.js'
import type { Database } from '../db/Database.js'
import type { Logger } from '../shared/logger.js'
import { generatePeerKeyPair, type PeerKeyPair, publicKeyMac, publicKeyMacValid, unwrapFromPeer, wrapForPeer } from '../vault/peerKeyWrap.js'
import type { Vault } from '../vault/Vault.js'

export type UnlockPropagationOptions = {
  db: Kysely<Database>
  vault: Vault
  /** This replica's id in `gateway_instances` (its row exists: the registry starts first). */
  instanceId: string
  /** How often this replica publishes and looks for work (the instance heartbeat's period). */
  intervalMs: number
  /** A replica whose heartbeat is older than this (s) is not live. */
  leaseS: number
  /** `replicaAuthKey(SHADOW_JWT_SECRET)`: published keys are MACed with it; a key without a valid MAC gets no wrap. */
  authKey: Buffer
  logger?: Logger | undefined
  changeFeed?: ChangeFeed | undefined
  /** Epoch milliseconds (tests). */
  now?: () => number
}

export type ReplicaCounts = { live: number; unlocked: number }

/**
 * Unlock once per deployment (seed 000 §3.4): the overlord unlocks one replica; this class, in every
 * replica, passes the data key to the others without it, or the unlock signature, ever being stored or sent
 * in the clear (the crypto is `src/vault/peerKeyWrap.ts`). Every `intervalMs`, and at once when the change
 * feed reports a wrap for it or the vault's state changes:
 * - it publishes its X25519 public key (made at start, private half only in memory), a MAC of it under a key
 *   derived from the deployment's `SHADOW_JWT_SECRET`, and whether it is unlocked, in its `gateway_instances` row;
 * - locked: it takes the wrap addressed to it (`vault_key_wraps`), opens it, hands the key to `Vault.adopt`
 *   (which checks the key commitment), and deletes the row whatever the outcome; a wrap that fails is logged
 *   (without content) and ignored;
 * - unlocked: it wraps the data key to every live locked replica whose published key carries a valid MAC and
 *   has no wrap for that key yet;
 * - both: wraps addressed to replicas that are not live are deleted.
 * No live unlocked replica → no wrap is made → a starting replica stays locked: once every replica has
 * stopped, the deployment is locked, as one server is after a restart.
 */
export class UnlockPropagation {
  readonly #o: UnlockPropagationOptions
  readonly #now: () => number
  #keys: PeerKeyPair | undefined
  #timer: NodeJS.Timeout | undefined
  #unsubscribe: (() => void) | undefined
  #running: Promise<void> | undefined
  #again = false
  #stopped = false

  constructor(options: UnlockPropagationOptions) {
    this.#o = options
    this.#now = options.now ?? Date.now
  }

  async start(): Promise<void> {
    this.#keys = generatePeerKeyPair()
    this.#stopped = false
    // wraps made for this id under an earlier key pair can never be opened now
    await this.#o.db.deleteFrom('vault_key_wraps').where('recipient_instance', '=', this.#o.instanceId).execute()
    await this.#publish()
    this.#unsubscribe = this.#o.changeFeed?.subscribe((change) => {
      if (change.kind === 'all' || (change.table === 'vault_key_wraps' && change.key === this.#o.instanceId)) this.poke()
    })
    this.#timer = setInterval(() => this.poke(), this.#o.intervalMs)
    this.#timer.unref()
    this.poke()
  }

  /** Runs a round soon (coalesced: at most one at a time, and one more after it when poked meanwhile). */
  poke(): void {
    if (this.#stopped || !this.#keys) return
    if (this.#running) {
      this.#again = true
      return
    }
    this.#running = this.round()
      .catch((error: unknown) => this.#o.logger?.error({ err: String(error) }, 'vault unlock propagation round failed'))
      .finally(() => {
        this.#running = undefined
        if (this.#again) {
          this.#again = false
          this.poke()
        }
      })
  }

  /** One round (tests call it directly). */
  async round(): Promise<void> {
    if (!this.#keys) return
    await this.#publish()
    if (this.#o.vault.isUnlocked()) await this.#wrapToPeers()
    else await this.#pickUp()
    await this.#o.db
      .deleteFrom('vault_key_wraps')
      .where('recipient_instance', 'not in', (eb) => this.#liveQuery(eb.selectFrom('gateway_instances').select('instance_id')))
      .execute()
  }

  /** Live replicas and how many of them hold the data key (preflight). */
  async counts(): Promise<ReplicaCounts> {
    // not started (an app built but not started, as in some tests): this replica alone
    if (!this.#keys) return { live: 1, unlocked: this.#o.vault.isUnlocked() ? 1 : 0 }
    const rows = await this.#liveQuery(this.#o.db.selectFrom('gateway_instances').select(['instance_id', 'vault_unlocked'])).execute()
    return { live: rows.length, unlocked: rows.filter((r) => Number(r.vault_unlocked) === 1).length }
  }

  /** Withdraws the public key and marks this replica locked (clean shutdown); the private key is dropped. */
  async stop(): Promise<void> {
    this.#stopped = true
    if (this.#timer) clearInterval(this.#timer)
    this.#timer = undefined
    this.#unsubscribe?.()
    await this.#running
    this.#keys = undefined
    await this.#o.db.updateTable('gateway_instances').set({ unlock_public_key: null, unlock_key_mac: null, vault_unlocked: 0 }).where('instance_id', '=', this.#o.instanceId).execute()
    await this.#o.db.deleteFrom('vault_key_wraps').where('recipient_instance', '=', this.#o.instanceId).execute()
  }

  #liveQuery<Q extends { where: (...args: any[]) => any }>(query: Q): Q {
    const since = Math.floor(this.#now() / 1000) - this.#o.leaseS
    return (query as any).where('heartbeat_at', '>=', since).where('stopped_at', 'is', null) as Q
  }

  async #publish(): Promise<void> {
    await this.#o.db
      .updateTable('gateway_instances')
      .set({
        unlock_public_key: this.#keys!.publicKey,
        unlock_key_mac: publicKeyMac(this.#o.authKey, this.#o.instanceId, this.#keys!.publicKey),
        vault_unlocked: this.#o.vault.isUnlocked() ? 1 : 0,
      })
      .where('instance_id', '=', this.#o.instanceId)
      .execute()
  }

  async #wrapToPeers(): Promise<void> {
    const { db, instanceId } = this.#o
    await db.deleteFrom('vault_key_wraps').where('recipient_instance', '=', instanceId).execute()
    const peers = await this.#liveQuery(
      db.selectFrom('gateway_instances').select(['instance_id', 'unlock_public_key', 'unlock_key_mac']).where('vault_unlocked', '=', 0).where('unlock_public_key', 'is not', null).where('instance_id', '!=', instanceId),
    ).execute()
    if (peers.length === 0) return
    const wrapped = new Map((await db.selectFrom('vault_key_wraps').select(['recipient_instance', 'recipient_public_key']).execute()).map((r) => [r.recipient_instance, r.recipient_public_key]))
    for (const peer of peers) {
      if (wrapped.get(peer.instance_id) === peer.unlock_public_key) continue
      if (!publicKeyMacValid(this.#o.authKey, peer.instance_id, peer.unlock_public_key!, peer.unlock_key_mac)) {
        this.#o.logger?.warn({ instance: peer.instance_id }, 'vault: a published unlock key without a valid MAC gets no wrap (not a replica of this deployment?)')
        continue
      }
      let wrap
      try {
        wrap = this.#o.vault.withDataKey((dataKey) => wrapForPeer({ dataKey, sender: instanceId, recipient: peer.instance_id, recipientPublicKey: peer.unlock_public_key! }))
      } catch {
        return // locked meanwhile, or a malformed published key: nothing to send
      }
      const row = { ...wrap, created_at: Math.floor(this.#now() / 1000) }
      await db
        .insertInto('vault_key_wraps')
        .values(row)
        .onConflict((oc) => oc.column('recipient_instance').doUpdateSet(row))
        .execute()
      this.#o.logger?.info({ recipient: peer.instance_id }, 'vault: data key wrapped to a locked replica')
    }
  }

  async #pickUp(): Promise<void> {
    const { db, instanceId } = this.#o
    const wrap = await db.selectFrom('vault_key_wraps').selectAll().where('recipient_instance', '=', instanceId).executeTakeFirst()
    if (!wrap) return
    let adopted = false
    let dataKey: Buffer | undefined
    try {
      dataKey = unwrapFromPeer(wrap, { instance: instanceId, keys: this.#keys! })
      adopted = await this.#o.vault.adopt(dataKey)
    } catch {
      adopted = false
    } finally {
      dataKey?.fill(0)
    }
    if (adopted) await this.#publish()
    // used or refused, the row is done with (a refused one would be tried forever)
    await db.deleteFrom('vault_key_wraps').where('recipient_instance', '=', instanceId).where('nonce', '=', wrap.nonce).execute()
    if (adopted) this.#o.logger?.info({ sender: wrap.sender_instance }, 'vault unlocked by a peer replica')
    else this.#o.logger?.warn({ sender: wrap.sender_instance }, 'vault: refused a key wrap that does not open or does not match the vault')
  }
}
