import { createHash, randomUUID } from 'node:crypto'
import { createReadStream, createWriteStream, type ReadStream } from 'node:fs'
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import { Transform, type Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { ModelServerError } from '../errors.js'

export const digestPattern = /^sha256:[0-9a-f]{64}$/

/** Temporary files older than this are leftovers of a crashed process (swept at start). */
const STALE_TEMP_MS = 60 * 60_000

export function assertDigest(digest: string): void {
  if (!digestPattern.test(digest)) throw new ModelServerError('invalid_digest', `invalid digest '${digest}'`)
}

export function sha256Digest(bytes: Uint8Array | string): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`
}

/** Content-addressed blobs in Ollama's layout: `<root>/blobs/sha256-<hex>`. */
export class BlobStore {
  readonly dir: string
  private readonly tmpDir: string

  constructor(modelsDir: string) {
    this.dir = path.join(modelsDir, 'blobs')
    this.tmpDir = path.join(modelsDir, 'tmp')
  }

  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true })
    await mkdir(this.tmpDir, { recursive: true })
    await this.sweepTemp(STALE_TEMP_MS)
  }

  /**
   * Removes temporary files untouched for `olderThanMs` (left by a process that crashed mid-write). A write in
   * progress, here or in another process sharing the directory, keeps touching its file and is left alone.
   */
  async sweepTemp(olderThanMs: number): Promise<number> {
    let removed = 0
    for (const name of await readdir(this.tmpDir).catch(() => [] as string[])) {
      const file = path.join(this.tmpDir, name)
      const st = await stat(file).catch(() => undefined)
      if (st?.isFile() && Date.now() - st.mtimeMs > olderThanMs) {
        await rm(file, { force: true })
        removed++
      }
    }
    return removed
  }

  /** Names of the temporary files present now (tests: no write leaves one behind). */
  async temporaryFiles(): Promise<string[]> {
    return readdir(this.tmpDir).catch(() => [])
  }

  path(digest: string): string {
    assertDigest(digest)
    return path.join(this.dir, digest.replace(':', '-'))
  }

  async size(digest: string): Promise<number | undefined> {
    try {
      const s = await stat(this.path(digest))
      return s.isFile() ? s.size : undefined
    } catch {
      return undefined
    }
  }

  async has(digest: string): Promise<boolean> {
    return (await this.size(digest)) !== undefined
  }

  read(digest: string): ReadStream {
    return createReadStream(this.path(digest))
  }

  /** Writes bytes already in memory (small layers: template, params...). Returns the digest. */
  async putBytes(bytes: Uint8Array | string): Promise<{ digest: string; size: number }> {
    const buf = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : Buffer.from(bytes)
    const digest = sha256Digest(buf)
    if (!(await this.has(digest))) {
      const tmp = this.tmpPath()
      try {
        const handle = await open(tmp, 'w')
        try {
          await handle.writeFile(buf)
        } finally {
          await handle.close()
        }
        await rename(tmp, this.path(digest))
      } finally {
        await rm(tmp, { force: true })
      }
    }
    return { digest, size: buf.length }
  }

  /**
   * Streams `source` to disk while hashing it; the blob only appears under its digest once the hash matches
   * `expected` (400 `digest mismatch` otherwise, and nothing is kept). `onBytes` reports progress.
   */
  async putStream(
    source: Readable | AsyncIterable<Uint8Array>,
    expected: string,
    onBytes?: (completed: number) => void,
    maxBytes = Infinity,
  ): Promise<{ digest: string; size: number }> {
    assertDigest(expected)
    const tmp = this.tmpPath()
    const hash = createHash('sha256')
    let size = 0
    const tap = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        size += chunk.length
        if (size > maxBytes) return cb(blobTooLarge(maxBytes))
        hash.update(chunk)
        onBytes?.(size)
        cb(null, chunk)
      },
    })
    try {
      await pipeline(source, tap, createWriteStream(tmp))
      const actual = `sha256:${hash.digest('hex')}`
      if (actual !== expected) {
        throw new ModelServerError('digest_mismatch', `digest mismatch, expected "${expected}", got "${actual}"`)
      }
      await rename(tmp, this.path(expected))
      return { digest: expected, size }
    } finally {
      await rm(tmp, { force: true })
    }
  }

  /**
   * Streams `source` into a temporary file (for pulls and registry uploads, which verify the digest as a separate
   * step). Call `commit` or `discard` afterwards. A new file is removed when the stream fails (client gone, pull
   * aborted); an appended one (`append`) belongs to its upload session, which discards it.
   */
  async writeTemp(
    source: Readable | AsyncIterable<Uint8Array>,
    onBytes?: (completed: number) => void,
    append?: { path: string },
    maxBytes = Infinity,
  ): Promise<{ path: string; size: number }> {
    const tmp = append?.path ?? this.tmpPath()
    let size = 0
    const tap = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        size += chunk.length
        if (size > maxBytes) return cb(blobTooLarge(maxBytes))
        onBytes?.(size)
        cb(null, chunk)
      },
    })
    try {
      await pipeline(source, tap, createWriteStream(tmp, { flags: append ? 'a' : 'w' }))
    } catch (error) {
      if (!append) await rm(tmp, { force: true })
      throw error
    }
    return { path: tmp, size }
  }

  /** sha256 of a file, `sha256:<hex>`. */
  async hashFile(file: string): Promise<string> {
    const hash = createHash('sha256')
    await pipeline(createReadStream(file), hash)
    return `sha256:${hash.digest('hex')}`
  }

  /**
   * Moves a verified temporary file to its digest (400 `digest mismatch` when it does not hash to it). The
   * temporary file is gone afterwards either way.
   */
  async commit(tmp: string, expected: string): Promise<void> {
    try {
      assertDigest(expected)
      const actual = await this.hashFile(tmp)
      if (actual !== expected) {
        throw new ModelServerError('digest_mismatch', `digest mismatch, expected "${expected}", got "${actual}"`)
      }
      await rename(tmp, this.path(expected))
    } finally {
      await rm(tmp, { force: true })
    }
  }

  async discard(tmp: string): Promise<void> {
    await rm(tmp, { force: true })
  }

  async remove(digest: string): Promise<void> {
    await rm(this.path(digest), { force: true })
  }

  tmpPath(): string {
    return path.join(this.tmpDir, `partial-${randomUUID()}`)
  }
}

/** A blob past its bound (`MODELSERVER_MAX_BLOB_BYTES`, or what a manifest declared): refused as it streams in. */
export function blobTooLarge(maxBytes: number): ModelServerError {
  return new ModelServerError('blob_too_large', `blob larger than ${maxBytes} bytes`)
}
