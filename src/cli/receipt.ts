/**
 * `pay2store receipt <arTxId>` prints the gateway's receipt (generated client, `getReceipt`);
 * `pay2store verify <arTxId>` checks it: the bytes the Arweave gateway serves hash to the receipt's
 * SHA-256 and size, and once batched, the receipt's leaf and Merkle proof lead to the batch root
 * (the leaf rule of ReceiptBatches.attestLeaf, @openzeppelin/merkle-tree).
 */
import { createHash } from 'node:crypto'
import { StandardMerkleTree } from '@openzeppelin/merkle-tree'
import { createClient } from '../../generated/gateway/client/index.js'
import { getReceipt as getReceiptOp } from '../../generated/gateway/sdk.gen.js'
import type { Receipt } from '../../generated/gateway/types.gen.js'
import { LEAF_ENCODING, type LeafTuple } from '../batch/receiptLeaf.js'
import { CliError, EXIT, httpError, request, unreachable } from './CliError.js'
import type { ArweaveChoice } from './devnetFile.js'
import { foreignGatewayWarning } from './foreignGateway.js'
import { getText } from './getText.js'
import { formatAmount, unitOfCurrency } from './formatAmount.js'

const AR_TX_ID = /^[A-Za-z0-9_-]{43}$/

export async function fetchReceipt(gateway: string, arTxId: string): Promise<Receipt> {
  if (!AR_TX_ID.test(arTxId)) throw new CliError('bad_id', `not a storage id (43 base64url characters): ${arTxId}`, EXIT.usage)
  const client = createClient({ baseUrl: gateway.replace(/\/$/, '') })
  let result
  try {
    result = await getReceiptOp({ client, path: { ar_tx_id: arTxId } })
  } catch (error) {
    throw unreachable(gateway, error, 'gateway')
  }
  if (!result.response) throw unreachable(gateway, result.error, 'gateway') // the generated client returns a failed fetch
  if (result.data) return result.data
  const body = result.error as { error?: string; message?: string } | undefined
  const status = result.response?.status ?? 0
  if (status === 404) throw new CliError(body?.error ?? 'receipt_not_found', body?.message ?? `no receipt for ${arTxId}`, EXIT.notFound)
  throw new CliError(body?.error ?? `http_${status}`, `GET /store/receipts answered ${status}: ${body?.message ?? ''}`, status === 400 ? EXIT.usage : EXIT.server)
}

/** The receipt for a person: one fact a line, each within 80 columns (ids and hashes are never cut). */
export function describeReceipt(r: Receipt): string {
  const lines = [
    `storage id   ${r.ar_tx_id}`,
    `payer        ${r.payer}`,
    `network      ${r.network}`,
    `paid         ${formatAmount(r.paid_atomics, unitOfCurrency(r.currency), r.asset)}`,
    `asset        ${r.asset}`,
    `size         ${r.size_bytes} bytes`,
    `sha256       ${r.sha256}`,
    `stored at    ${new Date(r.stored_at * 1000).toISOString()}`,
    ...(r.batch
      ? [`batch        epoch ${r.batch.epoch}, ${r.batch.leaf_count} leaves, committed on chain ${r.chain_id}`, `root         ${r.batch.root}`, `commit tx    ${r.commit_tx}`]
      : ['batch        not yet in a committed batch']),
  ]
  return lines.join('\n')
}

export type Verification = { arTxId: string; bytes: 'match'; sha256: string; sizeBytes: number; proof: 'valid' | 'not yet batched'; root: string | null }

export async function verify(gateway: string, arweave: ArweaveChoice, arTxId: string): Promise<Verification> {
  const r = await fetchReceipt(gateway, arTxId)
  const dataUrl = `${arweave.url.replace(/\/$/, '')}/${arTxId}`
  const res = await request(dataUrl, undefined, 'arweave')
  if (res.status !== 200) {
    const error = await httpError(res, `Arweave gateway GET /${arTxId}`)
    const warning = res.status === 404 ? await foreignGatewayOf(gateway, arweave, r.size_bytes) : undefined
    throw warning ? new CliError(error.code, `${error.message} — ${warning}`, error.exitCode) : error
  }
  const bytes = Buffer.from(await res.arrayBuffer())
  const sha256 = createHash('sha256').update(bytes).digest('hex')
  if (sha256 !== r.sha256.toLowerCase() || bytes.length !== r.size_bytes) {
    throw new CliError('verify_failed', `the stored bytes do not match the receipt: sha256 ${sha256} (${bytes.length} bytes), receipt ${r.sha256} (${r.size_bytes} bytes)`, EXIT.verifyFailed)
  }
  if (!r.batch) return { arTxId, bytes: 'match', sha256, sizeBytes: bytes.length, proof: 'not yet batched', root: null }
  const tuple: LeafTuple = [r.payer, r.ar_tx_id_bytes32, String(r.size_bytes), String(r.paid_atomics), r.currency]
  const ok = StandardMerkleTree.verify(r.batch.root, [...LEAF_ENCODING], tuple, r.batch.proof)
  if (!ok) throw new CliError('verify_failed', `the receipt's Merkle proof does not lead to batch root ${r.batch.root}`, EXIT.verifyFailed)
  return { arTxId, bytes: 'match', sha256, sizeBytes: bytes.length, proof: 'valid', root: r.batch.root }
}

/**
 * Why a devnet's Arweave gateway may not hold an item `gateway` stored: `gateway` is paid at none of that devnet's
 * service addresses (its quote names where it is paid), so it is another system. Asked only once the bytes are
 * missing; a quote that cannot be read gives no warning (the 404 stands on its own).
 */
async function foreignGatewayOf(gateway: string, arweave: ArweaveChoice, size: number): Promise<string | undefined> {
  if (!arweave.devnet) return undefined
  try {
    const quote = await getText(`${gateway.replace(/\/$/, '')}/store/quote?bytes=${size}`, 'GET /store/quote', 'gateway')
    const accepts = (JSON.parse(quote.body) as { accepts?: Array<{ payTo?: unknown }> }).accepts ?? []
    const payTo = accepts.map((a) => a.payTo).filter((a): a is string => typeof a === 'string')
    const warnings = payTo.map((address) => foreignGatewayWarning(arweave, gateway, address))
    return warnings.length > 0 && warnings.every((w) => w !== undefined) ? warnings[0] : undefined
  } catch {
    return undefined
  }
}
