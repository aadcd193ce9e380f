import { isIP } from 'node:net'

export type ListenAddress = {
  /** `''` = every interface (Go's `:11434`). */
  host: string
  port: number
}

const DEFAULT_PORT = 11434

/**
 * `OLLAMA_HOST` as Ollama reads it (envconfig.Host): surrounding quotes and spaces dropped, an optional scheme
 * (`http://` makes the default port 80, `https://` 443, none 11434), anything after the first `/` ignored, then
 * `host:port`, a bare host or IP (`0.0.0.0`, `[::1]`) with the default port, or `:port` for every interface. An
 * empty value is `127.0.0.1:11434`; a port that is not a number in 0–65535 falls back to the default, as Ollama.
 */
export function parseOllamaHost(value: string | undefined): ListenAddress {
  const text = (value ?? '').trim().replace(/^["']+|["']+$/g, '').trim()
  let defaultPort = DEFAULT_PORT
  let hostport = text
  const scheme = text.indexOf('://')
  if (scheme >= 0) {
    const name = text.slice(0, scheme).toLowerCase()
    hostport = text.slice(scheme + 3)
    if (name === 'http') defaultPort = 80
    else if (name === 'https') defaultPort = 443
  }
  hostport = hostport.split('/')[0]!
  const split = splitHostPort(hostport)
  let host: string
  let portText: string
  if (split) {
    ;[host, portText] = split
  } else {
    host = '127.0.0.1'
    portText = String(defaultPort)
    const bare = hostport.replace(/^\[|\]$/g, '')
    if (isIP(bare)) host = bare
    else if (hostport !== '') host = hostport
  }
  const port = /^[0-9]+$/.test(portText) && Number(portText) <= 65535 ? Number(portText) : defaultPort
  return { host, port }
}

/** Go's net.SplitHostPort: `host:port`, `[v6]:port`, `:port`; undefined when there is no port part. */
function splitHostPort(hostport: string): [string, string] | undefined {
  if (hostport.startsWith('[')) {
    const end = hostport.indexOf(']')
    if (end < 0 || hostport[end + 1] !== ':') return undefined
    return [hostport.slice(1, end), hostport.slice(end + 2)]
  }
  const colon = hostport.lastIndexOf(':')
  if (colon < 0 || hostport.indexOf(':') !== colon) return undefined // none, or an unbracketed IPv6 address
  return [hostport.slice(0, colon), hostport.slice(colon + 1)]
}
