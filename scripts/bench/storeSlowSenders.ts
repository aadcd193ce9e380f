/**
 * Benchmark: twenty slow unpaid uploads leave an honest paid upload unaffected — it
 * completes in the time it takes alone, within the run's spread.
 *
 *   npx tsx scripts/bench/storeSlowSenders.ts [--runs 15] [--senders 20] [--kb 256]
 *
 * The devnet peers (local Base, facilitator, Turbo-like upstream, Arweave gateway) run in this process; the
 * gateway's storage path runs in a child process (the `--gateway` mode of storeUpload.ts, default limits:
 * 16 upload slots, 4 unpaid requests per address, 8 KiB/s minimum rate). An honest client (127.0.0.1) quotes
 * and pays `--kb` KiB with the stock x402 client, `--runs` times alone, then `--runs` times while `--senders`
 * unpaid uploads from other addresses (127.0.0.10…) each send a 100 MB multipart body at 16 KiB/s — above the
 * minimum rate, so they are never cut and would hold a slot each for the whole run if an unpaid upload took one.
 * Prints the median, min and max of each series and whether the attacked median lies within the spread alone.
 */
import { randomBytes } from 'node:crypto'
import { request } from 'node:http'
import { join } from 'node:path'
import { x402Client, x402HTTPClient } from '@x402/core/client'
import { toClientEvmSigner } from '@x402/evm'
import { ExactEvmScheme } from '@x402/evm/exact/client'
import { createPublicClient, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { startStoreBenchPeers } from './support/startStoreBenchPeers.js'
import { startStoreGateway } from './support/startStoreGateway.js'

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`)
  return i > 0 ? Number(process.argv[i + 1]) : fallback
}
const runs = arg('runs', 15)
const senders = arg('senders', 20)
const kb = arg('kb', 256)

const { anvilAccount } = await import('../../devnet/accounts.js')
const { base, env, cleanup, dir } = await startStoreBenchPeers('bench-slow-')
try {
  // the gateway child of storeUpload.ts: StorageService behind a bare HTTP server
  const gw = await startStoreGateway(env, cleanup)

  const pub = createPublicClient({ chain: base.chain, transport: http(base.url) })
  const client = new x402HTTPClient(
    new x402Client((_v, accepts) => accepts[0]!)
      .register('eip155:*', new ExactEvmScheme(toClientEvmSigner(privateKeyToAccount(anvilAccount(2).privateKey), pub)))
      .setSpendControls({ allowedAssets: [{ network: 'eip155:8453', asset: base.tokenAddress, maxAmountPerPayment: '1000000000' }] }),
  )
  const form = (data: Buffer) => {
    const f = new FormData()
    f.append('file', new Blob([new Uint8Array(data)]), 'honest.bin')
    return f
  }
  /** One honest upload: quote, pay, store. Milliseconds, or the status that refused it. */
  const honest = async (): Promise<number | string> => {
    const data = randomBytes(kb * 1024)
    const started = performance.now()
    const quote = await fetch(`${gw}/store`, { method: 'POST', body: form(data) })
    if (quote.status !== 402) return `quote ${quote.status}`
    const required = client.getPaymentRequiredResponse((n) => quote.headers.get(n), await quote.json())
    const payload = await client.createPaymentPayload(required)
    const paid = await fetch(`${gw}/store`, { method: 'POST', body: form(data), headers: client.encodePaymentSignatureHeader(payload) })
    await paid.arrayBuffer()
    if (paid.status !== 200) return `paid ${paid.status}`
    return performance.now() - started
  }
  const series = async () => {
    const times: number[] = []
    const refused: string[] = []
    for (let i = 0; i < runs; i++) {
      const r = await honest()
      if (typeof r === 'number') times.push(r)
      else refused.push(r)
    }
    times.sort((a, b) => a - b)
    const ms = (v: number | undefined) => (v === undefined ? null : +v.toFixed(1))
    return { runs, ok: times.length, refused, median_ms: ms(times[Math.floor(times.length / 2)]), min_ms: ms(times[0]), max_ms: ms(times[times.length - 1]) }
  }

  await honest() // warm-up: every module on the path loaded
  const alone = await series()

  // the attackers: unpaid multipart uploads of a declared 100 MB, sent at 16 KiB/s from other addresses
  const boundary = 'slowsender'
  const attackers = Array.from({ length: senders }, (_, i) => {
    const req = request(`${gw}/store`, {
      method: 'POST',
      localAddress: `127.0.0.${10 + i}`,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(100_000_000) },
    })
    let answered: number | undefined
    req.on('response', (res) => {
      answered = res.statusCode
      res.resume()
    })
    req.on('error', () => undefined)
    req.write(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="slow.bin"\r\ncontent-type: application/octet-stream\r\n\r\n`)
    const chunk = Buffer.alloc(4096, 0x61)
    const timer = setInterval(() => req.write(chunk), 250)
    return { stop: () => (clearInterval(timer), req.destroy()), answered: () => answered }
  })
  cleanup.unshift(async () => attackers.forEach((a) => a.stop()))
  await new Promise((r) => setTimeout(r, 1000))
  const attacked = await series()
  const attackersAnswered = attackers.filter((a) => a.answered() !== undefined).length
  attackers.forEach((a) => a.stop())

  const within = attacked.ok === runs && alone.max_ms !== null && attacked.median_ms !== null && attacked.median_ms <= alone.max_ms
  console.log(
    JSON.stringify(
      {
        bench: 'storeSlowSenders',
        honest_upload_bytes: kb * 1024,
        slow_unpaid_senders: senders,
        sender_rate_bytes_per_s: 16384,
        alone,
        with_slow_senders: attacked,
        slow_senders_answered_during_run: attackersAnswered,
        attacked_median_within_spread_alone: within,
        pass: within,
      },
      null,
      2,
    ),
  )
  if (!within) process.exitCode = 1
} finally {
  for (const fn of cleanup) await fn().catch(() => undefined)
}
