/**
 * Where the stateful chains start, and the steps only the fuzzer can complete:
 * - every operation with links, drawn valid, with a tier it accepts;
 * - a wallet login of a wallet the fuzzer holds (`createLoginChallenge`), whose `registerWithSignature` step the
 *   completer signs — so login → session → journal runs on a real session;
 * - an overlord challenge (`createShadowChallenge`), whose `verifyShadowChallenge` step is signed with the
 *   overlord's key (when given) — the bearer then feeds the admin routes;
 * - a paid upload (`storeFile` quoted, then paid by an EVM payer when one is given) — quote → store → receipt;
 * - a pull of the devnet registry's model (when its `host:port` is given) — pull → show → delete → show;
 * - a model created and one copied from the installed `svc-tiny-chat:latest`, a blob pushed under its own digest
 *   and a registry upload session started — each then looked at through its links.
 * A wallet whose key the fuzzer holds (the payer's, when given) also logs in, so its session reads its uploads.
 */
import { createHash } from 'node:crypto'
import fc from 'fast-check'
import type { PrivateKeyAccount } from 'viem/accounts'
import { SeededRandom } from '../SeededRandom.js'
import type { Payer, Requirement } from '../types.js'
import type { ChainRoot, Completer } from './chains.js'
import { tierFor } from './chains.js'
import type { FuzzRun } from './FuzzRun.js'
import { replayStep } from './FuzzRun.js'
import type { Operation } from './operations.js'
import { type FuzzRequest, validRequestArbitrary } from './requestArbitrary.js'

export type SeedOptions = { overlord?: PrivateKeyAccount; payers?: Record<string, Payer>; registry?: string; seed: number; wallets?: PrivateKeyAccount[] }

const json = (op: Operation, body: unknown, headers: Record<string, string> = {}): FuzzRequest => ({
  operation: op.id,
  mutation: 'valid',
  method: op.method,
  path: op.path,
  headers: { ...headers, 'content-type': 'application/json' },
  body: { text: JSON.stringify(body) },
})

const bodyOf = (request: FuzzRequest): Record<string, unknown> => {
  try {
    return request.body && 'text' in request.body ? (JSON.parse(request.body.text) as Record<string, unknown>) : {}
  } catch {
    return {}
  }
}

export function chainSeeds(operations: Operation[], run: FuzzRun, options: SeedOptions) {
  const random = new SeededRandom(options.seed, 'fuzz-chains')
  const find = (server: string, id: string) => operations.find((op) => op.server === server && op.id === id)
  const wallets = new Map<string, PrivateKeyAccount>()
  const completers = new Map<string, Completer>()
  completers.set('gateway registerWithSignature', async (request) => {
    const body = bodyOf(request)
    const wallet = typeof body.wallet === 'string' ? wallets.get(body.wallet.toLowerCase()) : undefined
    if (!wallet || typeof body.challenge !== 'string') return request
    return { ...request, body: { text: JSON.stringify({ ...body, signature: await wallet.signMessage({ message: body.challenge }) }) } }
  })
  completers.set('gateway verifyShadowChallenge', async (request, source) => {
    const message = isAnswerText(source) ? (JSON.parse(source.answer.text) as { message?: unknown }).message : undefined
    if (!options.overlord || typeof message !== 'string') return request
    return { ...request, body: { text: JSON.stringify({ ...bodyOf(request), signature: await options.overlord.signMessage({ message }) }) } }
  })

  const roots: (() => Promise<ChainRoot | undefined>)[] = []
  for (const op of operations.filter((o) => o.links.size > 0)) {
    roots.push(async () => {
      const request = fc.sample(validRequestArbitrary(op), { seed: options.seed + roots.length, numRuns: 1 })[0]!
      return { op, tier: tierFor(op, 'none'), request, label: `${op.server} ${op.id}` }
    })
  }
  const challenge = find('gateway', 'createLoginChallenge')
  if (challenge) {
    for (const held of [undefined, ...(options.wallets ?? [])]) {
      roots.push(async () => {
        const wallet = held ?? random.account()
        wallets.set(wallet.address.toLowerCase(), wallet)
        return { op: challenge, tier: 'none', request: json(challenge, { wallet: wallet.address }), label: held ? 'payer login' : 'wallet login' }
      })
    }
  }
  const shadow = find('gateway', 'createShadowChallenge')
  if (shadow && options.overlord) roots.push(async () => ({ op: shadow, tier: 'none', request: json(shadow, { scope: 'auth' }), label: 'overlord bearer' }))
  const store = find('gateway', 'storeFile')
  const evm = Object.entries(options.payers ?? {}).find(([pattern]) => pattern.startsWith('eip155:'))
  if (store && evm) {
    roots.push(async () => {
      const file = Buffer.from(random.bytes(2048)).toString('base64')
      const form: FuzzRequest = { operation: store.id, mutation: 'valid', method: 'POST', path: store.path, headers: {}, body: { parts: [{ name: 'file', value: file, filename: 'chain.bin' }] } }
      const quote = await run.send(store, form, 'none')
      run.check(quote, 'stateful', -1, [replayStep(quote, form)])
      if (!isAnswerText(quote) || quote.answer.status !== 402) return undefined
      const requirement = ((JSON.parse(quote.answer.text) as { accepts?: Requirement[] }).accepts ?? []).find((a) => a.network === evm[0])
      if (!requirement) return undefined
      const header = await evm[1](requirement, new TextEncoder().encode(file))
      return { op: store, tier: 'none', request: { ...form, headers: { 'PAYMENT-SIGNATURE': header } }, label: 'paid upload' }
    })
  }
  const quote = find('gateway', 'quoteStore')
  if (quote) roots.push(async () => ({ op: quote, tier: 'none', request: { operation: quote.id, mutation: 'valid', method: 'GET', path: `${quote.path}?bytes=2048`, headers: {} }, label: 'quote' }))
  const putManifest = find('modelserver', 'registryPutManifest')
  const getManifest = find('modelserver', 'registryGetManifest')
  if (putManifest && getManifest) {
    roots.push(async () => {
      // a manifest whose blobs the server holds: the installed model's, put under a repository of its own
      const source: FuzzRequest = { operation: getManifest.id, mutation: 'valid', method: 'GET', path: '/v2/library/svc-tiny-chat/manifests/latest', headers: {} }
      const got = await run.send(getManifest, source, 'none')
      run.check(got, 'stateful', -1, [replayStep(got, source)])
      if (!isAnswerText(got) || got.answer.status !== 200) return undefined
      const media = 'application/vnd.docker.distribution.manifest.v2+json'
      const path = putManifest.path.replace('{namespace}', 'library').replace('{repository}', random.name('chain').toLowerCase()).replace('{reference}', 'latest')
      return { op: putManifest, tier: 'none', request: { operation: putManifest.id, mutation: 'valid', method: 'PUT', path, headers: { 'content-type': media }, body: { text: got.answer.text } }, label: 'manifest put' }
    })
  }
  const create = find('modelserver', 'createModel')
  if (create) roots.push(async () => ({ op: create, tier: 'none', request: json(create, { model: `${random.name('chain-create-').toLowerCase()}:latest`, from: 'svc-tiny-chat:latest', stream: false }), label: 'model created' }))
  const copy = find('modelserver', 'copyModel')
  if (copy) roots.push(async () => ({ op: copy, tier: 'none', request: json(copy, { source: 'svc-tiny-chat:latest', destination: `${random.name('chain-copy-').toLowerCase()}:latest` }), label: 'model copied' }))
  const blob = find('modelserver', 'pushBlob')
  if (blob) {
    roots.push(async () => {
      const bytes = Buffer.from(random.bytes(64)).toString('hex')
      const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`
      return { op: blob, tier: 'none', request: { operation: blob.id, mutation: 'valid', method: 'POST', path: blob.path.replace('{digest}', digest), headers: { 'content-type': 'application/octet-stream' }, body: { text: bytes } }, label: 'blob pushed' }
    })
  }
  const upload = find('modelserver', 'registryStartUpload')
  if (upload) roots.push(async () => ({ op: upload, tier: 'none', request: { operation: upload.id, mutation: 'valid', method: 'POST', path: upload.path.replace('{namespace}', 'library').replace('{repository}', random.name('chain').toLowerCase()), headers: {} }, label: 'registry upload' }))
  const pull = find('modelserver', 'pullModel')
  if (pull && options.registry) {
    roots.push(async () => ({ op: pull, tier: 'none', request: json(pull, { model: `${options.registry}/library/tiny-chat:latest`, insecure: true, stream: false }), label: 'registry pull' }))
  }
  return { roots, completers }
}

function isAnswerText(x: { answer: unknown }): x is { answer: { status: number; text: string } } {
  return typeof (x.answer as { status?: unknown }).status === 'number'
}
