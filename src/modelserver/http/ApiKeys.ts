import { createHash, timingSafeEqual } from 'node:crypto'
import { readFileSync, statSync } from 'node:fs'
import { weakSecretProblem } from '../../shared/assessSecret.js'

export type ApiKeysOptions = {
  /** Keys from the environment (`MODELSERVER_API_KEYS`, comma separated). */
  keys: ReadonlyArray<string>
  /** A file of keys, one per line, `#` comments (`MODELSERVER_API_KEYS_FILE`); re-read when it changes. */
  file?: string | undefined
  /** How often the file's mtime and size are looked at, at most (default 1 s). */
  recheckMs?: number
  now?: () => number
  /** A file key refused on a re-read (weak): the rest stay in use; the operator is told. */
  onWarning?: (message: string) => void
}

/**
 * The model server's API keys: several at once, from the environment and a file, so a key is rotated by adding
 * the new one, moving clients, then removing the old — without a restart (the file is re-read when its mtime or
 * size changes, looked at no more than once a second, and on `reload()`, which `main.ts` calls on SIGHUP).
 * Keys are held as SHA-256 digests and compared in constant time. A weak key refuses start (the same estimate
 * as the gateway's secrets); on a later re-read it is dropped with a warning. An empty or missing file with no
 * other key refuses everything: configured but empty fails closed.
 */
export class ApiKeys {
  private envDigests: Buffer[]
  private fileDigests: Buffer[] = []
  private stamp = ''
  private checkedAt = 0

  constructor(private readonly options: ApiKeysOptions) {
    this.envDigests = options.keys.map((k) => digestOf(checkKey(k, 'MODELSERVER_API_KEYS')))
    if (options.file) this.readFile(true)
  }

  /** True when keys are configured: every route then needs one. */
  get enabled(): boolean {
    return this.envDigests.length > 0 || this.options.file !== undefined
  }

  /** Re-reads the file now (SIGHUP). */
  reload(): void {
    if (this.options.file) this.readFile(false)
  }

  matches(candidate: string): boolean {
    this.refreshIfChanged()
    const digest = digestOf(candidate)
    let found = false
    for (const d of [...this.envDigests, ...this.fileDigests]) found = timingSafeEqual(d, digest) || found
    return found
  }

  private refreshIfChanged(): void {
    const file = this.options.file
    if (!file) return
    const now = (this.options.now ?? Date.now)()
    if (now - this.checkedAt < (this.options.recheckMs ?? 1000)) return
    this.checkedAt = now
    if (stampOf(file) !== this.stamp) this.readFile(false)
  }

  private readFile(atStart: boolean): void {
    const file = this.options.file!
    let text = ''
    try {
      text = readFileSync(file, 'utf8')
    } catch (error) {
      if (atStart) throw new Error(`MODELSERVER_API_KEYS_FILE cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`)
      this.options.onWarning?.('MODELSERVER_API_KEYS_FILE cannot be read; its keys are no longer accepted')
    }
    this.stamp = stampOf(file)
    const keys = text
      .split(/\r?\n/)
      .map((l) => l.replace(/#.*$/, '').trim())
      .filter((l) => l !== '')
    const kept: Buffer[] = []
    for (const [i, key] of keys.entries()) {
      try {
        kept.push(digestOf(checkKey(key, `MODELSERVER_API_KEYS_FILE line ${i + 1}`)))
      } catch (error) {
        if (atStart) throw error
        this.options.onWarning?.(`${(error as Error).message}; that key is not accepted`)
      }
    }
    this.fileDigests = kept
  }
}

function checkKey(key: string, where: string): string {
  const problem = weakSecretProblem(key)
  if (problem) throw new Error(`${where}: an API key ${problem}; generate one with \`openssl rand -hex 32\``)
  return key
}

function digestOf(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest()
}

function stampOf(file: string): string {
  try {
    const s = statSync(file)
    return `${s.mtimeMs}:${s.size}:${s.ino}`
  } catch {
    return 'missing'
  }
}
