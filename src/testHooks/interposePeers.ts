import type { Env } from '../config/env.js'
import { FaultProxy } from './FaultProxy.js'

/** Settings that name a peer the gateway calls over HTTP (`SERVICE_X402__RPC_URL__EIP155_8453` included). */
const PEER_SETTING = /^SERVICE_[A-Z0-9_]*_URL(__[A-Z0-9_]+)?$/

export type Peer = { setting: string; target: string; proxy: FaultProxy }

/**
 * Puts a fault proxy (FaultProxy.ts) in front of every http(s) peer the environment configures, and returns the
 * environment with the proxies' URLs in their place; each peer is named by its setting, and a setting that
 * lists several URLs (`SERVICE_LLM__MODELSERVER__BASE_URL`) gets one proxy per URL, `#2`, `#3`… after the first.
 * Other schemes (a PostgreSQL or Redis URL) are left as they are.
 */
export async function interposePeers(env: Env): Promise<{ env: Env; peers: Map<string, Peer> }> {
  const out: Env = { ...env }
  const peers = new Map<string, Peer>()
  try {
    for (const [setting, value] of Object.entries(env)) {
      if (!PEER_SETTING.test(setting) || !value?.trim()) continue
      const urls = value.split(',').map((u) => u.trim())
      if (!urls.every((u) => /^https?:\/\//i.test(u))) continue
      const through: string[] = []
      for (const [i, url] of urls.entries()) {
        const proxy = new FaultProxy(new URL(url))
        await proxy.listen()
        peers.set(i === 0 ? setting : `${setting}#${i + 1}`, { setting, target: url, proxy })
        through.push(proxy.url)
      }
      out[setting] = through.join(',')
    }
  } catch (error) {
    await Promise.all([...peers.values()].map((p) => p.proxy.close()))
    throw error
  }
  return { env: out, peers }
}
