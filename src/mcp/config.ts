import { ConfigError } from '../config/ConfigError.js'
import { type Env, envInt, envList } from '../config/env.js'

/** The MCP endpoint's settings (`SERVICE_MCP__*`, docs/configuration.md). */
export type McpConfig = {
  /** Largest file `store_file` takes as base64 (decoded bytes); the JSON body of `/mcp` is bounded at 1 MB. */
  maxInlineBytes: number
  /** Origins (`https://host[:port]`) `store_file` may fetch a `url` from; empty: no fetching at all. */
  fetchOrigins: string[]
  /** Largest file `store_file` fetches from a `url`. */
  maxFetchBytes: number
  /** Bound on one fetch (connect to last byte). */
  fetchTimeoutMs: number
}

export function readMcpConfig(env: Env): McpConfig {
  const fetchOrigins = envList(env, 'SERVICE_MCP__FETCH_ORIGINS', []).map((text) => {
    let url: URL
    try {
      url = new URL(text)
    } catch {
      throw new ConfigError('SERVICE_MCP__FETCH_ORIGINS', `${JSON.stringify(text)} is not a URL`)
    }
    // An origin and nothing more: a path here would suggest a narrower allow-list than the one applied.
    if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.origin !== text.replace(/\/$/, '')) {
      throw new ConfigError('SERVICE_MCP__FETCH_ORIGINS', `${JSON.stringify(text)} is not an http(s) origin (scheme://host[:port])`)
    }
    return url.origin
  })
  return {
    maxInlineBytes: envInt(env, 'SERVICE_MCP__MAX_INLINE_BYTES', 524_288, { min: 1, max: 700_000 }),
    fetchOrigins,
    maxFetchBytes: envInt(env, 'SERVICE_MCP__MAX_FETCH_BYTES', 100 * 1024 * 1024, { min: 1 }),
    fetchTimeoutMs: envInt(env, 'SERVICE_MCP__FETCH_TIMEOUT_MS', 30_000, { min: 100 }),
  }
}
