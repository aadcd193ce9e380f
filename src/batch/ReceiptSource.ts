/**
 * Where the batch finds settled, stored uploads. The storage ledger implements it
 * (`ledgerReceiptSource.ts`); tests can pass a list.
 */
export type SettledReceipt = {
  arTxId: string
  uploadId: string
  depositId: string
  /** A CAIP-2 network of networks.ts or `algorand:<genesis_hash>`. */
  network: string
  /** Asset as the rail recorded it (token address, `31566704` or `ALGO`). */
  asset: string
  /** Payer as the rail recorded it (EVM address or Algorand address). */
  payer: string
  sizeBytes: bigint
  /** SHA-256 of the stored content (hex). */
  sha256: string
  /** What the payer paid, in atomic units. */
  paidAtomics: bigint
  /** When the paid upload was received (epoch seconds). */
  paidAt: number
  /** When the upstream accepted the item (epoch seconds); the receive time for rows stored before migration 0007. */
  storedAt: number
}

export interface ReceiptSource {
  /** Stored uploads paid before `cutoff` (epoch seconds) that are in no batch yet, oldest first. */
  unbatched(cutoff: number, limit: number): Promise<SettledReceipt[]>
  /** One stored upload by storage id, batched or not. */
  byArTxId(arTxId: string): Promise<SettledReceipt | undefined>
}
