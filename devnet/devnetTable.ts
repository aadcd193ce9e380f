/**
 * What `npm start` and `npm run devnet` print once the devnet is up: each peer's URL, the service's own
 * accounts and the funded test payers, with each payer's private key in full (the README has a newcomer import
 * EVM payer #1 into a browser wallet). Every line fits 80 columns: a value too long for the right-hand column
 * goes on a line of its own. Keys and tokens nobody types (the admin overlord's, the facilitator's and
 * algod's tokens, the Algorand mnemonics) are left in devnet.json, which the header names. Every key here is
 * a TEST key of this machine's devnet, and says so.
 */
import { relative } from 'node:path'
import type { DevnetInfo } from './startDevnet.js'

/** The widest line, so a terminal of 80 columns never wraps one (a line of exactly 80 may wrap in some). */
export const TABLE_WIDTH = 79
const LABEL = 25

type Row = { label: string; value: string; more?: string[] }

const usdc = (atomic: string) => `${(Number(atomic) / 1e6).toLocaleString('en-US')} USDC`

/** `path` relative to the working directory when it lies under it (as the user would type it), else whole. */
function shownPath(path: string): string {
  const rel = relative(process.cwd(), path)
  return rel && !rel.startsWith('..') ? rel : path
}

function render(rows: Row[]): string[] {
  const lines: string[] = []
  for (const { label, value, more = [] } of rows) {
    const inline = `  ${label.padEnd(LABEL)} ${value}`
    if (label.length <= LABEL && inline.length <= TABLE_WIDTH) lines.push(inline)
    else lines.push(`  ${label}`, `    ${value}`)
    for (const m of more) lines.push(`    ${m}`)
  }
  return lines
}

export function devnetTable(info: DevnetInfo): string {
  const file = shownPath(`${info.dataDir}/devnet.json`)
  const base = info.chains['eip155:8453']
  const mainnet = info.chains['eip155:1']
  const peers: Row[] =
    info.evm !== false
      ? [
          { label: 'local Base (eip155:8453)', value: base.rpcUrl, more: [`USDC ${base.usdc}`] },
          { label: 'Ethereum (eip155:1)', value: mainnet.rpcUrl, more: [`USDC ${mainnet.usdc}`] },
          { label: 'x402 facilitator', value: info.facilitator.url },
        ]
      : [{ label: 'EVM chains, facilitator', value: 'not started: no Anvil binary for this platform' }]
  peers.push(
    { label: 'storage upstream', value: info.storage.paymentUrl },
    { label: 'Arweave gateway', value: `${info.storage.gatewayUrl} (a block every ${info.storage.blockIntervalMs} ms)` },
    { label: 'algod', value: info.algorand.url, more: [`USDC ASA ${info.algorand.usdcAsaId}`] },
  )
  const service: Row[] = [
    ...(info.evm !== false ? [{ label: 'pay-to, EVM', value: info.service.payToEvm }] : []),
    { label: 'pay-to, Algorand', value: info.service.payToAlgorand },
    { label: 'Arweave key', value: shownPath(info.service.arweaveJwkPath) },
    { label: 'admin overlord (TEST key)', value: info.shadow.overlord.address },
  ]
  // numbered from #1 as a reader counts them; the Anvil account index is what other tools show
  const payers: Row[] = [
    ...info.accounts.evm
      .filter((a) => info.evm !== false && a.role === 'payer')
      .map((a, i) => ({ label: `EVM payer #${i + 1} (Anvil #${a.index})`, value: a.address, more: [`key ${a.privateKey}`, `${usdc(a.usdc)} on each chain`] })),
    ...info.accounts.algorand.filter((a) => a.role === 'payer').map((a, i) => ({ label: `Algorand payer #${i + 1}`, value: a.address, more: [`${usdc(a.usdc)} (ASA ${info.algorand.usdcAsaId})`] })),
  ]
  const header = `devnet peers (their tokens and the other keys: ${file})`
  return [
    ...(header.length <= TABLE_WIDTH ? [header] : ['devnet peers (their tokens and the other keys: in the file below)', `  ${file}`]),
    ...render(peers),
    'service accounts',
    ...render(service),
    'funded test payers: TEST keys of this devnet only, never use them elsewhere',
    ...render(payers),
  ].join('\n')
}
