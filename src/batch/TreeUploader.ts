/** Stores a batch's tree file permanently; the storage upstream implements it (`upstreamTreeUploader.ts`). */
export type TreeFileTag = { name: string; value: string }

export interface TreeUploader {
  /** Uploads `data` with `tags`; resolves to the 43-character base64url storage id. */
  upload(data: Uint8Array, tags: TreeFileTag[]): Promise<{ arTxId: string }>
}
