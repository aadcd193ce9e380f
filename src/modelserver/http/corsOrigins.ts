/**
 * The origins Ollama lets browsers call it from (envconfig.AllowedOrigins): the comma-separated `OLLAMA_ORIGINS`
 * entries, then `http(s)://localhost`, `127.0.0.1` and `0.0.0.0` with or without any port, and the desktop and
 * editor schemes `app://`, `file://`, `tauri://`, `vscode-webview://`, `vscode-file://`.
 */
export function ollamaAllowedOrigins(configured: string | undefined): string[] {
  const origins = configured && configured.trim() !== '' ? configured.split(',') : []
  for (const host of ['localhost', '127.0.0.1', '0.0.0.0']) {
    origins.push(`http://${host}`, `https://${host}`, `http://${host}:*`, `https://${host}:*`)
  }
  origins.push('app://*', 'file://*', 'tauri://*', 'vscode-webview://*', 'vscode-file://*')
  return origins
}

export type OriginMatcher = {
  /** `*` is in the list: every origin is allowed (and answered `Access-Control-Allow-Origin: *`). */
  allowAll: boolean
  matches(origin: string): boolean
  /** Entries ignored because they can never match (more than one `*`, or no scheme and no `*`). */
  ignored: string[]
}

const schemes = ['http://', 'https://', 'chrome-extension://', 'safari-extension://', 'moz-extension://', 'ms-browser-extension://']

/**
 * Matches origins as Ollama's CORS middleware (gin-contrib/cors with wildcards) does: an entry without `*` is
 * compared exactly (case-insensitively), one `*` matches any run of characters at its place (`http://localhost:*`,
 * `chrome-extension://*`, `https://*.example.com`), and `*` alone allows every origin. Ollama refuses to start on
 * an entry with two `*` or without a scheme; here such entries are reported in `ignored` instead.
 */
export function createOriginMatcher(entries: ReadonlyArray<string>): OriginMatcher {
  const exact = new Set<string>()
  const wildcards: Array<[string, string]> = []
  const ignored: string[] = []
  let allowAll = false
  for (const raw of entries) {
    const entry = raw.trim().toLowerCase()
    if (entry === '') continue
    if (entry === '*') {
      allowAll = true
      continue
    }
    const stars = entry.split('*').length - 1
    if (stars > 1 || (stars === 0 && !schemes.some((s) => entry.startsWith(s)))) {
      ignored.push(raw)
      continue
    }
    if (stars === 0) exact.add(entry)
    else {
      const at = entry.indexOf('*')
      wildcards.push([entry.slice(0, at), entry.slice(at + 1)])
    }
  }
  return {
    allowAll,
    ignored,
    matches: (origin) => {
      if (allowAll) return true
      const o = origin.toLowerCase()
      if (exact.has(o)) return true
      return wildcards.some(([prefix, suffix]) => o.length >= prefix.length + suffix.length && o.startsWith(prefix) && o.endsWith(suffix))
    },
  }
}
