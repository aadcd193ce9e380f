/**
 * On-disk store shared by the storage upstream (writes) and the Arweave gateway peer (reads), plus the
 * devnet "weave": a block producer that includes pending items in the next block.
 *
 * Layout under `dir`:
 *   items/<id>.bin   the signed ANS-104 data item exactly as uploaded
 *   items/<id>.json  metadata (owner address, tags, content type, data offset, winc, block inclusion)
 *   ledger.json      prepaid winc balances and credited funding transactions
 *   weave.json       current block height and hash
 * Writes are atomic (temp file + rename), so a peer can stop and restart on the same directory.
 * One instance per directory per process (`openItemStore` is ref-counted), so an upstream and a gateway
 * in the same process share one block producer.
 */
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'

export interface StoredItem {
  id: string
  ownerAddress: string
  signatureType: number
  tags: { name: string; value: string }[]
  contentType: string
  dataOffset: number
  itemSize: number
  dataSize: number
  winc: string
  timestamp: number
  deadlineHeight: number
  /** base64url raw fields of the data item header (for GraphQL). */
  ownerKey?: string
  signature?: string
  target?: string
  anchor?: string
  blockHeight?: number
  blockHash?: string
  blockTimestamp?: number
  blockPrevious?: string
}

interface Ledger {
  balances: Record<string, string>
  credited: Record<string, { address: string; winc: string; currency: string; at: number }>
}

interface Weave {
  height: number
  hash: string
  genesis: string
}

function atomicWrite(path: string, text: string | Uint8Array): void {
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`
  writeFileSync(tmp, text)
  renameSync(tmp, path)
}

function readJson<T>(path: string, fallback: T): T {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T
  } catch {
    return fallback
  }
}

function b64url(buf: Buffer): string {
  return buf.toString('base64url')
}

export class ItemStore {
  readonly dir: string
  private readonly itemsDir: string
  private readonly pending = new Set<string>()
  private readonly meta = new Map<string, StoredItem>()
  private ledger: Ledger
  private weave: Weave
  private timer: NodeJS.Timeout | undefined
  private refs = 0
  blockIntervalMs: number

  constructor(dir: string, blockIntervalMs: number) {
    this.dir = resolve(dir)
    this.blockIntervalMs = blockIntervalMs
    this.itemsDir = join(this.dir, 'items')
    mkdirSync(this.itemsDir, { recursive: true })
    this.ledger = readJson<Ledger>(join(this.dir, 'ledger.json'), { balances: {}, credited: {} })
    const genesis = b64url(createHash('sha384').update(`devnet-weave:${this.dir}`).digest())
    this.weave = readJson<Weave>(join(this.dir, 'weave.json'), { height: 0, hash: genesis, genesis })
    for (const f of readdirSync(this.itemsDir)) {
      if (!f.endsWith('.json')) continue
      const m = readJson<StoredItem | null>(join(this.itemsDir, f), null)
      if (!m) continue
      this.meta.set(m.id, m)
      if (m.blockHeight === undefined) this.pending.add(m.id)
    }
  }

  // ------------------------------------------------------------------ weave

  get height(): number {
    return this.weave.height
  }

  get tipHash(): string {
    return this.weave.hash
  }

  /** Produces one block including every pending item. */
  mineBlock(): { height: number; hash: string; txs: string[] } {
    const txs = [...this.pending].sort()
    const height = this.weave.height + 1
    const hash = b64url(createHash('sha384').update(`${this.weave.hash}|${height}|${txs.join(',')}`).digest())
    const timestamp = Math.floor(Date.now() / 1000)
    for (const id of txs) {
      const m = this.meta.get(id)
      if (!m) continue
      m.blockHeight = height
      m.blockHash = hash
      m.blockTimestamp = timestamp
      m.blockPrevious = this.weave.hash
      atomicWrite(join(this.itemsDir, `${id}.json`), JSON.stringify(m))
      this.pending.delete(id)
    }
    this.weave = { ...this.weave, height, hash }
    atomicWrite(join(this.dir, 'weave.json'), JSON.stringify(this.weave))
    return { height, hash, txs }
  }

  retain(): void {
    this.refs++
    if (!this.timer && this.blockIntervalMs > 0) {
      this.timer = setInterval(() => this.mineBlock(), this.blockIntervalMs)
      this.timer.unref()
    }
  }

  release(): void {
    this.refs = Math.max(0, this.refs - 1)
    if (this.refs === 0) {
      if (this.timer) clearInterval(this.timer)
      this.timer = undefined
      stores.delete(this.dir)
    }
  }

  // ------------------------------------------------------------------ items

  has(id: string): boolean {
    return this.meta.has(id)
  }

  get(id: string): StoredItem | undefined {
    return this.meta.get(id)
  }

  /** Every stored item (metadata only). */
  all(): StoredItem[] {
    return [...this.meta.values()]
  }

  /** Path of the stored data item file (for streaming). */
  itemPath(id: string): string {
    return join(this.itemsDir, `${id}.bin`)
  }

  /** Directory for uploads in progress (same filesystem, so `put` can rename). */
  get incomingDir(): string {
    const d = join(this.dir, 'incoming')
    mkdirSync(d, { recursive: true })
    return d
  }

  /** Moves a verified item file into the store and records its metadata (pending until the next block). */
  put(itemFile: string, m: StoredItem): void {
    renameSync(itemFile, join(this.itemsDir, `${m.id}.bin`))
    atomicWrite(join(this.itemsDir, `${m.id}.json`), JSON.stringify(m))
    this.meta.set(m.id, m)
    this.pending.add(m.id)
  }

  async readData(id: string): Promise<Buffer | undefined> {
    const m = this.meta.get(id)
    if (!m) return undefined
    const p = join(this.itemsDir, `${id}.bin`)
    if (!existsSync(p)) return undefined
    const raw = await readFile(p)
    return raw.subarray(m.dataOffset)
  }

  async readRaw(id: string): Promise<Buffer | undefined> {
    const p = join(this.itemsDir, `${id}.bin`)
    return existsSync(p) ? readFile(p) : undefined
  }

  // ------------------------------------------------------------------ ledger

  balance(address: string): bigint | undefined {
    const b = this.ledger.balances[address]
    return b === undefined ? undefined : BigInt(b)
  }

  private saveLedger(): void {
    atomicWrite(join(this.dir, 'ledger.json'), JSON.stringify(this.ledger, null, 2))
  }

  credit(address: string, winc: bigint): bigint {
    const next = (this.balance(address) ?? 0n) + winc
    this.ledger.balances[address] = next.toString()
    this.saveLedger()
    return next
  }

  /** Debits `winc`; returns false (and changes nothing) when the balance is short. */
  debit(address: string, winc: bigint): boolean {
    if (winc === 0n) return true
    const bal = this.balance(address) ?? 0n
    if (bal < winc) return false
    this.ledger.balances[address] = (bal - winc).toString()
    this.saveLedger()
    return true
  }

  creditedTx(key: string): Ledger['credited'][string] | undefined {
    return this.ledger.credited[key]
  }

  recordCredit(key: string, address: string, winc: bigint, currency: string): bigint {
    this.ledger.credited[key] = { address, winc: winc.toString(), currency, at: Math.floor(Date.now() / 1000) }
    return this.credit(address, winc)
  }
}

const stores = new Map<string, ItemStore>()

/** Opens (or shares) the store for `dir`. Call `release()` when done. */
export function openItemStore(dir: string, opts: { blockIntervalMs?: number } = {}): ItemStore {
  const key = resolve(dir)
  let s = stores.get(key)
  if (!s) {
    s = new ItemStore(key, opts.blockIntervalMs ?? 2_000)
    stores.set(key, s)
  } else if (opts.blockIntervalMs !== undefined) {
    s.blockIntervalMs = opts.blockIntervalMs
  }
  s.retain()
  return s
}
