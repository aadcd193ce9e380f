/**
 * Benchmark: a 200 MB paid upload through `POST /store` keeps the gateway's peak RSS growth under 100 MB.
 *
 *   npx tsx scripts/bench/storeUpload.ts [--mb 200] [--spool local|postgres]
 *
 * `--spool` puts the gateway on PostgreSQL (a schema of its own on `BENCH_DATABASE_URL`, default the local
 * test server) with that spool store: `local` keeps the paid bytes in the spool directory,
 * `postgres` in `storage_spool_chunks`. Without it: SQLite and its default, the spool directory.
 *
 * The devnet peers (local Base, facilitator, Turbo-like upstream, Arweave gateway) run in this process;
 * the gateway's storage path (StorageService behind a bare HTTP server) runs in a child process that samples
 * its own RSS every 20 ms. The client streams the multipart body from disk (quote, then a paid request with
 * the x402 reference client), then the bytes are read back from the Arweave gateway and hashed.
 */
import { createHash, randomBytes } from 'node:crypto'
import { createReadStream, createWriteStream } from 'node:fs'
import { stat, writeFile } from 'node:fs/promises'
import { createServer, request } from 'node:http'
import { join } from 'node:path'
import { x402Client, x402HTTPClient } from '@x402/core/client'
import { toClientEvmSigner } from '@x402/evm'
import { ExactEvmScheme } from '@x402/evm/exact/client'
import { createPublicClient, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { startStoreBenchPeers } from './support/startStoreBenchPeers.js'
import { startStoreGateway } from './support/startStoreGateway.js'

if (process.argv.includes('--gateway')) await runGateway()
else await runBench()

async function runGateway(): Promise<void> {
  const { createDatabase } = await import('../../src/db/createDatabase.js')
  const { Ledger } = await import('../../src/storage/Ledger.js')
  const { StorageService } = await import('../../src/storage/StorageService.js')
  const { readStorageConfig } = await import('../../src/storage/config.js')
  const { readX402Config } = await import('../../src/x402/config.js')
  const { gatewayCatalogue } = await import('../../src/handlers/plugins.js')
  const database = await createDatabase({ url: process.env.SERVICE_DATABASE_URL! })
  const service = new StorageService({ storage: readStorageConfig(), x402: readX402Config(), ledger: new Ledger(database.db) })
  let peak = 0
  let sampling = false
  const timer = setInterval(() => {
    if (sampling) peak = Math.max(peak, process.memoryUsage.rss())
  }, 20)
  const server = createServer(async (req, res) => {
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers })
      res.end(JSON.stringify(body))
    }
    try {
      if (req.url === '/__bench/start') {
        global.gc?.()
        const base = process.memoryUsage.rss()
        peak = base
        sampling = true
        send(200, { base })
      } else if (req.url === '/__bench/stop') {
        sampling = false
        send(200, { peak })
      } else if (req.method === 'POST' && req.url === '/store') {
        const outcome = await service.store(req, '/store')
        send(outcome.status, outcome.body, outcome.headers)
      } else send(404, { error: 'not_found' })
    } catch (error) {
      // the gateway's own rendering: a 402 carries its PAYMENT-REQUIRED header, a refusal its status and code
      const result = gatewayCatalogue.toResult(error)
      if (result) send(result.status, result.body, result.headers as Record<string, string> | undefined)
      else send(500, { error: 'internal_error', message: String(error) })
    }
  })
  server.listen(Number(process.env.SERVICE_PORT), '127.0.0.1', () => process.send?.('ready'))
  process.on('SIGTERM', () => {
    clearInterval(timer)
    server.close()
    void database.close().then(() => process.exit(0))
  })
}

function postMultipart(url: string, path: string, size: number, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, string>; body: unknown }> {
  const boundary = `----bench${randomBytes(8).toString('hex')}`
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`)
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`)
  return new Promise((resolve, reject) => {
    const req = request(`${url}/store`, {
      method: 'POST',
      headers: { ...headers, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(head.length + size + tail.length) },
    }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const hs: Record<string, string> = {}
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') hs[k] = v
        resolve({ status: res.statusCode ?? 0, headers: hs, body: JSON.parse(Buffer.concat(chunks).toString() || 'null') })
      })
    })
    req.on('error', reject)
    req.write(head)
    const file = createReadStream(path)
    file.on('error', reject)
    file.on('end', () => req.end(tail))
    file.pipe(req, { end: false })
  })
}

async function runBench(): Promise<void> {
  const mbIndex = process.argv.indexOf('--mb')
  const mb = mbIndex > 0 ? Number(process.argv[mbIndex + 1]) : 200
  const size = mb * 1_000_000
  const { base, env, cleanup, dir } = await startStoreBenchPeers('bench-store-')
  const spoolIndex = process.argv.indexOf('--spool')
  const spool = spoolIndex > 0 ? process.argv[spoolIndex + 1] : undefined
  if (spool !== undefined) await onPostgresSpool(spool, env, cleanup)
  try {
    const gw = await startStoreGateway(env, cleanup, ['--expose-gc'])
    const payAndStore = await paidStoreClient(base, gw, env)

    // warm-up: load every module on the path with a small paid upload
    const small = join(dir, 'small.bin')
    await writeFile(small, randomBytes(4096))
    await payAndStore(small, 4096)

    const big = join(dir, 'big.bin')
    process.stdout.write(`writing ${mb} MB test file… `)
    const sha = await writeTestFile(big, size)
    console.log('done')

    const { base: rssBase } = (await (await fetch(`${gw}/__bench/start`)).json()) as { base: number }
    const started = Date.now()
    const { result, amount } = await payAndStore(big, (await stat(big)).size)
    const seconds = (Date.now() - started) / 1000
    const { peak } = (await (await fetch(`${gw}/__bench/stop`)).json()) as { peak: number }
    const readBack = await sha256Of(`${env.SERVICE_STORAGE__GATEWAY_URL}/${result.arTxId}`)
    const growthMb = (peak - rssBase) / 1_048_576
    console.log(JSON.stringify({
      bench: 'storeUpload',
      database: spool === undefined ? 'sqlite' : 'postgres',
      spool: spool ?? 'local',
      size_bytes: size,
      price_atomic: amount,
      ar_tx_id: result.arTxId,
      sha256_matches: result.sha256 === sha && readBack === sha,
      seconds_quote_and_paid_upload: seconds,
      gateway_rss_base_mb: +(rssBase / 1_048_576).toFixed(1),
      gateway_rss_peak_mb: +(peak / 1_048_576).toFixed(1),
      gateway_rss_growth_mb: +growthMb.toFixed(1),
      limit_mb: 100,
      pass: growthMb < 100 && readBack === sha,
    }, null, 2))
    if (!(growthMb < 100 && readBack === sha)) process.exitCode = 1
  } finally {
    for (const fn of cleanup) await fn().catch(() => undefined)
  }
}

type Cleanup = (() => Promise<unknown>)[]

/** `--spool local|postgres`: the gateway on a PostgreSQL schema of its own (dropped at the end) with that spool store. */
async function onPostgresSpool(spool: string, env: NodeJS.ProcessEnv, cleanup: Cleanup): Promise<void> {
  if (spool !== 'local' && spool !== 'postgres') throw new Error('--spool local|postgres')
  const pg = (await import('pg')).default
  const server = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
  const schema = `bench_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`
  const admin = new pg.Client({ connectionString: server })
  await admin.connect()
  await admin.query(`CREATE SCHEMA "${schema}"`)
  await admin.end()
  cleanup.push(async () => {
    const drop = new pg.Client({ connectionString: server })
    await drop.connect()
    await drop.query(`DROP SCHEMA "${schema}" CASCADE`)
    await drop.end()
  })
  env.SERVICE_DATABASE_URL = `${server}?options=${encodeURIComponent(`-c search_path=${schema}`)}`
  env.SERVICE_STORAGE__SPOOL_STORE = spool
}

type StoreBenchPeers = Awaited<ReturnType<typeof startStoreBenchPeers>>
type Stored = { result: { arTxId: string; sha256: string; sizeBytes: number }; amount: string }

/** Quote, then pay with the x402 reference client (an Anvil payer on the local Base) and store a file. */
async function paidStoreClient(base: StoreBenchPeers['base'], gw: string, env: NodeJS.ProcessEnv): Promise<(path: string, bytes: number) => Promise<Stored>> {
  const { anvilAccount } = await import('../../devnet/accounts.js')
  const pub = createPublicClient({ chain: base.chain, transport: http(base.url) })
  const client = new x402HTTPClient(
    new x402Client((_v, accepts) => accepts[0]!)
      .register('eip155:*', new ExactEvmScheme(toClientEvmSigner(privateKeyToAccount(anvilAccount(2).privateKey), pub)))
      .setSpendControls({ allowedAssets: [{ network: 'eip155:8453', asset: base.tokenAddress, maxAmountPerPayment: '1000000000' }] }),
  )
  return async (path, bytes) => {
    const quote = await postMultipart(gw, path, bytes, {})
    if (quote.status !== 402) throw new Error(`quote answered ${quote.status}: ${JSON.stringify(quote.body)}`)
    const required = client.getPaymentRequiredResponse((n) => quote.headers[n.toLowerCase()], quote.body)
    const payload = await client.createPaymentPayload(required)
    const paid = await postMultipart(gw, path, bytes, client.encodePaymentSignatureHeader(payload))
    if (paid.status !== 200) {
      // the queued upload's recorded cause (the bench gateway has no logger)
      const { createDatabase } = await import('../../src/db/createDatabase.js')
      const db = await createDatabase({ url: env.SERVICE_DATABASE_URL!, migrate: false })
      const rows = await db.db.selectFrom('storage_uploads').select(['upload_id', 'status', 'last_error']).execute().finally(() => db.close())
      throw new Error(`paid upload answered ${paid.status}: ${JSON.stringify(paid.body)} ${JSON.stringify(rows)}`)
    }
    return { result: paid.body as Stored['result'], amount: required.accepts[0]!.amount }
  }
}

/** Writes `size` bytes of random data to `path` (a 1 MiB block, varied each time) and returns their SHA-256. */
async function writeTestFile(path: string, size: number): Promise<string> {
  const hash = createHash('sha256')
  await new Promise<void>((resolve, reject) => {
    const out = createWriteStream(path)
    out.on('error', reject)
    let written = 0
    const chunk = randomBytes(1 << 20)
    const pump = () => {
      while (written < size) {
        const n = Math.min(chunk.length, size - written)
        const part = chunk.subarray(0, n)
        chunk[0] = (chunk[0]! + 1) & 255
        hash.update(part)
        written += n
        if (!out.write(Buffer.from(part))) {
          out.once('drain', pump)
          return
        }
      }
      out.end(resolve)
    }
    pump()
  })
  return hash.digest('hex')
}

/** The SHA-256 of what a URL serves, read as a stream. */
async function sha256Of(url: string): Promise<string> {
  const back = await fetch(url)
  const readHash = createHash('sha256')
  const reader = back.body!.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    readHash.update(value)
  }
  return readHash.digest('hex')
}
