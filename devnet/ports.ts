/**
 * The devnet's ports (docs/design.md), what runs on each, and where `npm start` / `npm run devnet` put them:
 * the defaults; every one shifted by `DEVNET_PORT_OFFSET` (so a second devnet can run beside the first, e.g.
 * `DEVNET_PORT_OFFSET=100`: 8645, 8646, 8502, …); or, with `DEVNET_FREE_PORTS=1`, each on a free port.
 * A light module: `npm start` reads it to check the ports before it loads anything else.
 */
export const DEFAULT_PORTS = {
  base: 8545,
  mainnet: 8546,
  facilitator: 8402,
  upstream: 8403,
  arweave: 8404,
  algod: 8405,
} as const

export type DevnetPorts = { [K in keyof typeof DEFAULT_PORTS]: number }

/** What a person is told runs on each port. */
export const PORT_NAMES: Readonly<Record<keyof DevnetPorts, string>> = {
  base: 'devnet chain eip155:8453 (local Base, Anvil)',
  mainnet: 'devnet chain eip155:1 (Anvil)',
  facilitator: 'devnet x402 facilitator',
  upstream: 'devnet storage upstream',
  arweave: 'devnet Arweave gateway',
  algod: 'devnet algod',
}

/** The ports the environment asks for: `'free'`, or each default shifted by `DEVNET_PORT_OFFSET`. Throws on a bad offset. */
export function devnetPortsFromEnv(env: NodeJS.ProcessEnv): DevnetPorts | 'free' {
  if (env.DEVNET_FREE_PORTS === '1') return 'free'
  const raw = env.DEVNET_PORT_OFFSET?.trim()
  const offset = raw ? Number(raw) : 0
  const highest = Math.max(...Object.values(DEFAULT_PORTS))
  if (!Number.isInteger(offset) || offset < -8000 || highest + offset > 65535) {
    throw new Error(`DEVNET_PORT_OFFSET must be a whole number that keeps every devnet port between 1 and 65535 (got "${raw}")`)
  }
  return Object.fromEntries(Object.entries(DEFAULT_PORTS).map(([k, port]) => [k, port + offset])) as DevnetPorts
}
