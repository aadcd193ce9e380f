/**
 * Blob digests that writes in progress are about to reference (a create's layers, a pull's downloads, a copy's
 * source). Garbage collection never removes a pinned blob, so a manifest written while a delete prunes blobs
 * never points at a blob that was just removed. Counted, because several writes may pin the same blob.
 */
export class BlobPins {
  private readonly counts = new Map<string, number>()

  add(digest: string): void {
    this.counts.set(digest, (this.counts.get(digest) ?? 0) + 1)
  }

  remove(digest: string): void {
    const n = (this.counts.get(digest) ?? 0) - 1
    if (n <= 0) this.counts.delete(digest)
    else this.counts.set(digest, n)
  }

  has(digest: string): boolean {
    return this.counts.has(digest)
  }

  snapshot(): Set<string> {
    return new Set(this.counts.keys())
  }

  get size(): number {
    return this.counts.size
  }
}
