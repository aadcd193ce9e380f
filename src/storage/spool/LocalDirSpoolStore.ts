import { createReadStream, createWriteStream } from 'node:fs'
import { copyFile, mkdir, rename, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { checkSpoolId, SpoolBytesMissingError, type SpoolStore } from './SpoolStore.js'

/**
 * Paid bytes as files in one directory: today's spool for a single instance (SQLite), or for replicas that all
 * mount the directory at the same path (`SERVICE_STORAGE__SHARED_SPOOL_DIR`). Without such a mount a file here
 * is lost with its machine — hence PostgreSQL or S3 for replicas.
 */
export class LocalDirSpoolStore implements SpoolStore {
  readonly kind = 'shared' as const
  readonly #dir: string

  constructor(dir: string) {
    this.#dir = dir
  }

  /** The file holding `id` (it may not exist): read in place, no copy. */
  pathOf(id: string): string {
    return join(this.#dir, checkSpoolId(id))
  }

  /** Takes the received file itself (`rename`; a copy when the directory is another file system). */
  async adopt(id: string, file: string): Promise<string> {
    const path = this.pathOf(id)
    await mkdir(this.#dir, { recursive: true })
    try {
      await rename(file, path)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error
      await copyFile(file, path)
      await rm(file, { force: true })
    }
    return path
  }

  async put(id: string, source: Readable): Promise<void> {
    const path = this.pathOf(id)
    await mkdir(this.#dir, { recursive: true })
    // written under a temporary name, then renamed: a reader never sees half a file
    const partial = `${path}.partial`
    try {
      await pipeline(source, createWriteStream(partial))
      await rename(partial, path)
    } catch (error) {
      await rm(partial, { force: true })
      throw error
    }
  }

  async openRead(id: string): Promise<Readable> {
    const path = this.pathOf(id)
    if ((await this.size(id)) === undefined) throw new SpoolBytesMissingError(this.kind, id)
    return createReadStream(path)
  }

  async delete(id: string): Promise<void> {
    await rm(this.pathOf(id), { force: true })
  }

  async size(id: string): Promise<number | undefined> {
    try {
      return (await stat(this.pathOf(id))).size
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw error
    }
  }
}
