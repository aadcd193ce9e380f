import { readdir, stat, unlink } from 'node:fs/promises'
import { join } from 'node:path'

/** How long a temporary file may go untouched before a start removes it: no upload or spool write pauses this long. */
export const TEMPORARY_FILE_IDLE_MS = 60 * 60_000

/**
 * Removes the files of `dir` untouched for `idleMs`: what uploads and spool writes left when their process was
 * killed (each up to `SERVICE_STORAGE__MAX_UPLOAD_BYTES`; nothing else removes them). Untouched, not merely old: the
 * directory may be shared, and a file another process is still writing is recent. Returns how many were removed.
 */
export async function sweepTemporaryFiles(dir: string, idleMs = TEMPORARY_FILE_IDLE_MS, now = Date.now()): Promise<number> {
  let names: string[]
  try {
    names = await readdir(dir)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0
    throw error
  }
  let removed = 0
  for (const name of names) {
    const path = join(dir, name)
    try {
      const st = await stat(path)
      if (!st.isFile() || now - st.mtimeMs < idleMs) continue
      await unlink(path)
      removed++
    } catch (error) {
      // gone meanwhile (its writer finished, or another replica swept it)
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
  }
  return removed
}
