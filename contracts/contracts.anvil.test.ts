/**
 * Conformance of the deployed contracts on a real Anvil, deployed by contracts/deploy.ts:
 * commit → attestLeaf → `claimed`; StorageAttest with viem's EIP-712 signer and with a wrong signer;
 * treasury config / harvest / threshold / pause paths; events and their argument names and types as the
 * seed (§6.2) lists them, and as asyncapi/events.yaml documents them.
 *
 * Leaf-hash property: for random tuples (random field values plus the edge values 0 and 2^n−1), the
 * contract's `leafHash` equals @openzeppelin/merkle-tree's `leafHash`, and library proofs of a random
 * tree are accepted by `attestLeaf`. Done here rather than in forge because the library is JavaScript;
 * forge's ReceiptBatches.t.sol also pins a few library-made vectors.
 */
import { randomBytes, randomInt } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { StandardMerkleTree } from '@openzeppelin/merkle-tree'
import {
  type Abi,
  type AbiEvent,
  type Address,
  type Hex,
  type PublicClient,
  BaseError as ViemBaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createWalletClient,
  getAddress,
  http,
  parseEventLogs,
  toHex,
} from 'viem'
import { formatAbiItem } from 'viem/utils'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse as parseYaml } from 'yaml'
import { anvilAccount } from '../devnet/accounts.js'
import { localChain } from '../devnet/chains/startChain.js'
import { type AnvilInstance, startAnvil } from '../devnet/chains/startAnvil.js'
import { receiptBatchesAbi, storageAttestAbi } from '../src/batch/abi.js'
import { arTxIdToBytes32 } from '../src/batch/receiptLeaf.js'
import { storageAttestor } from '../src/batch/storageAttestor.js'
import { type ContractsDeployment, ROLE, deployContracts, loadContractArtifacts, loadMockArtifacts, readDeployment } from './deploy.js'

const ENCODING = ['address', 'bytes32', 'uint256', 'uint256', 'uint16']
type Tuple = [string, string, string, string, number]

const deployer = anvilAccount(0)
const attestor = anvilAccount(1)
const governor = anvilAccount(2)
const harvester = anvilAccount(3)
const outsider = anvilAccount(4)
const sink = '0x000000000000000000000000000000000000519C' as Address

let anvil: AnvilInstance
let pub: PublicClient
let dataDir: string
let d: ContractsDeployment
const art = loadContractArtifacts()
const mocks = loadMockArtifacts()

function walletOf(key: Hex) {
  return createWalletClient({ account: privateKeyToAccount(key), chain: localChain(8453, anvil.url), transport: http(anvil.url) })
}

/** Simulates (so a revert surfaces with its reason), sends, waits; returns the decoded logs. */
async function send(key: Hex, address: Address, abi: Abi, functionName: string, args: unknown[]) {
  const account = privateKeyToAccount(key)
  const { request } = await pub.simulateContract({ account, address, abi, functionName, args })
  const hash = await walletOf(key).writeContract(request as never)
  const receipt = await pub.waitForTransactionReceipt({ hash, pollingInterval: 50 })
  expect(receipt.status).toBe('success')
  return parseEventLogs({ abi, logs: receipt.logs })
}

/** The revert of a call: `{reason}` for require strings, `{errorName, args}` for custom errors. */
async function revertOf(key: Hex, address: Address, abi: Abi, functionName: string, args: unknown[]) {
  try {
    await pub.simulateContract({ account: privateKeyToAccount(key), address, abi, functionName, args })
  } catch (err) {
    const reverted = err instanceof ViemBaseError ? err.walk((e) => e instanceof ContractFunctionRevertedError) : null
    if (reverted instanceof ContractFunctionRevertedError) {
      return { reason: reverted.reason, errorName: reverted.data?.errorName, args: reverted.data?.args }
    }
    throw err
  }
  throw new Error(`${functionName} did not revert`)
}

const rand32 = (): Hex => toHex(randomBytes(32))
const randUint = (bits: number): bigint => {
  const pick = randomInt(4)
  if (pick === 0) return 0n
  if (pick === 1) return (1n << BigInt(bits)) - 1n
  return BigInt(toHex(randomBytes(bits / 8))) >> BigInt(randomInt(bits))
}
const randomTuple = (): Tuple => [
  getAddress(toHex(randomBytes(20))),
  rand32(),
  randUint(256).toString(),
  randUint(256).toString(),
  Number(randUint(16)),
]

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 8453 })
  pub = createPublicClient({ chain: localChain(8453, anvil.url), transport: http(anvil.url) }) as PublicClient
  dataDir = mkdtempSync(join(tmpdir(), 'contracts-anvil-'))
  d = await deployContracts({
    rpcUrl: anvil.url,
    deployerKey: deployer.privateKey,
    roles: { attestors: [attestor.address], governors: [governor.address], harvesters: [harvester.address] },
    dataDir,
  })
})

afterAll(async () => {
  await anvil?.close()
  if (dataDir) rmSync(dataDir, { recursive: true, force: true })
})

describe('deploy script', () => {
  it('deploys the three contracts, writes contracts-<chainId>.json and grants the configured roles', async () => {
    expect(readDeployment(dataDir, 8453)).toEqual(d)
    expect(d).toMatchObject({ chainId: 8453, deployer: deployer.address, treasuryVenue: { venue: 'mock' } })
    for (const a of [d.storageAttest, d.receiptBatches, d.treasury]) expect(await pub.getCode({ address: a })).not.toBe('0x')
    const has = (address: Address, abi: Abi, role: Hex, who: Address) =>
      pub.readContract({ address, abi, functionName: 'hasRole', args: [role, who] })
    const rb = art.ReceiptBatches.abi as Abi
    const tr = art.Treasury.abi as Abi
    expect(await has(d.receiptBatches, rb, ROLE.ATTESTOR, attestor.address)).toBe(true)
    expect(await has(d.receiptBatches, rb, ROLE.ATTESTOR, outsider.address)).toBe(false)
    expect(await has(d.receiptBatches, rb, ROLE.DEFAULT_ADMIN, deployer.address)).toBe(true)
    expect(await has(d.treasury, tr, ROLE.GOVERNOR, governor.address)).toBe(true)
    expect(await has(d.treasury, tr, ROLE.HARVESTER, harvester.address)).toBe(true)
    expect(await has(d.treasury, tr, ROLE.HARVESTER, governor.address)).toBe(false)
    expect(ROLE.ATTESTOR).toBe(await pub.readContract({ address: d.receiptBatches, abi: rb, functionName: 'ATTESTOR_ROLE' }))
    expect(ROLE.GOVERNOR).toBe(await pub.readContract({ address: d.treasury, abi: tr, functionName: 'GOVERNOR_ROLE' }))
    expect(ROLE.HARVESTER).toBe(await pub.readContract({ address: d.treasury, abi: tr, functionName: 'HARVESTER_ROLE' }))
  })

  it('hands admin over to a configured address and renounces the deployer', async () => {
    const other = await deployContracts({
      rpcUrl: anvil.url,
      deployerKey: deployer.privateKey,
      roles: { admin: outsider.address },
      treasury: { ...d.treasuryVenue },
      dataDir: false,
    })
    expect(other.treasuryVenue.venue).toBe('configured')
    for (const [address, abi] of [[other.receiptBatches, art.ReceiptBatches.abi], [other.treasury, art.Treasury.abi]] as const) {
      expect(await pub.readContract({ address, abi: abi as Abi, functionName: 'hasRole', args: [ROLE.DEFAULT_ADMIN, outsider.address] })).toBe(true)
      expect(await pub.readContract({ address, abi: abi as Abi, functionName: 'hasRole', args: [ROLE.DEFAULT_ADMIN, deployer.address] })).toBe(false)
    }
  })
})

describe('ReceiptBatches on Anvil', () => {
  const abi = art.ReceiptBatches.abi as Abi

  it('commit → attestLeaf accepted once → claimed; bad proof; no such epoch; attestor only', async () => {
    const values: Tuple[] = [
      [attestor.address, rand32(), '1024', '5000', 1],
      [governor.address, rand32(), '2048', '7000', 2],
      [harvester.address, rand32(), '4096', '9000', 3],
    ]
    const tree = StandardMerkleTree.of(values, ENCODING)
    const treeTx = rand32()
    const before = (await pub.readContract({ address: d.receiptBatches, abi, functionName: 'currentEpoch' })) as bigint

    expect(await revertOf(outsider.privateKey, d.receiptBatches, abi, 'commitBatch', [tree.root, 3n, treeTx])).toMatchObject({
      errorName: 'AccessControlUnauthorizedAccount',
      args: [outsider.address, ROLE.ATTESTOR],
    })
    const logs = await send(attestor.privateKey, d.receiptBatches, abi, 'commitBatch', [tree.root, 3n, treeTx])
    const epoch = before + 1n
    expect(logs).toHaveLength(1)
    expect(logs[0]).toMatchObject({ eventName: 'RootCommitted', args: { epoch, root: tree.root, leafCount: 3n, arweaveTx: treeTx } })

    for (const [i, v] of tree.entries()) {
      const proof = tree.getProof(i)
      const args = [epoch, v[0], v[1], BigInt(v[2]), BigInt(v[3]), v[4], proof]
      const caller = [attestor, governor, harvester][i]!
      const stored = await send(caller.privateKey, d.receiptBatches, abi, 'attestLeaf', args)
      expect(stored[0]).toMatchObject({
        eventName: 'Stored',
        args: { payer: v[0], arTxid: v[1], sizeBytes: BigInt(v[2]), paidAtomics: BigInt(v[3]), currency: v[4], epoch },
      })
      expect(await revertOf(caller.privateKey, d.receiptBatches, abi, 'attestLeaf', args)).toMatchObject({ reason: 'claimed' })
    }
    const [v0] = values
    const forged = [epoch, v0[0], v0[1], BigInt(v0[2]), BigInt(v0[3]) + 1n, v0[4], tree.getProof(0)]
    expect(await revertOf(outsider.privateKey, d.receiptBatches, abi, 'attestLeaf', forged)).toMatchObject({ reason: 'bad proof' })
    const future = [epoch + 1n, v0[0], v0[1], BigInt(v0[2]), BigInt(v0[3]), v0[4], tree.getProof(0)]
    expect(await revertOf(outsider.privateKey, d.receiptBatches, abi, 'attestLeaf', future)).toMatchObject({ reason: 'no such epoch' })
    const zero = [0n, v0[0], v0[1], BigInt(v0[2]), BigInt(v0[3]), v0[4], tree.getProof(0)]
    expect(await revertOf(outsider.privateKey, d.receiptBatches, abi, 'attestLeaf', zero)).toMatchObject({ reason: 'no such epoch' })
  })

  it('leaf hash equals the library for 200 random tuples; library proofs of a random tree are accepted', async () => {
    const values = Array.from({ length: 200 }, randomTuple)
    const tree = StandardMerkleTree.of(values, ENCODING)
    const onChain = await Promise.all(
      values.map((v) =>
        pub.readContract({
          address: d.receiptBatches,
          abi,
          functionName: 'leafHash',
          args: [v[0], v[1], BigInt(v[2]), BigInt(v[3]), v[4]],
        }),
      ),
    )
    values.forEach((v, i) => expect(onChain[i], `tuple ${JSON.stringify(v)}`).toBe(tree.leafHash(v)))

    await send(attestor.privateKey, d.receiptBatches, abi, 'commitBatch', [tree.root, 200n, rand32()])
    const epoch = (await pub.readContract({ address: d.receiptBatches, abi, functionName: 'currentEpoch' })) as bigint
    for (let k = 0; k < 8; k++) {
      const i = randomInt(values.length)
      const v = values[i]!
      const args = [epoch, v[0], v[1], BigInt(v[2]), BigInt(v[3]), v[4], tree.getProof(i)]
      // the simulation succeeding is the acceptance; not sent, so picks may repeat
      await pub.simulateContract({ account: outsider.address, address: d.receiptBatches, abi, functionName: 'attestLeaf', args })
    }
  })
})

describe('StorageAttest on Anvil', () => {
  const abi = art.StorageAttest.abi as Abi
  const types = {
    Attest: [
      { name: 'txid', type: 'bytes32' },
      { name: 'sha256Expected', type: 'bytes32' },
      { name: 'storer', type: 'address' },
      { name: 'nonce', type: 'uint256' },
    ],
  } as const

  it("accepts the caller's own EIP-712 signature (viem signTypedData) once per nonce, rejects a wrong signer", async () => {
    const storer = privateKeyToAccount(governor.privateKey)
    const domain = { name: 'StorageAttest', version: '1', chainId: 8453, verifyingContract: d.storageAttest } as const
    const txid = rand32()
    const sha = rand32()
    const nonce = (await pub.readContract({ address: d.storageAttest, abi, functionName: 'nonces', args: [storer.address] })) as bigint
    const signature = await storer.signTypedData({
      domain,
      types,
      primaryType: 'Attest',
      message: { txid, sha256Expected: sha, storer: storer.address, nonce },
    })
    const logs = await send(governor.privateKey, d.storageAttest, abi, 'attest', [txid, sha, signature])
    expect(logs[0]).toMatchObject({ eventName: 'StorageVerified', args: { storer: storer.address, txid, sha256Expected: sha, nonce } })
    // replay: the nonce moved on
    expect(await revertOf(governor.privateKey, d.storageAttest, abi, 'attest', [txid, sha, signature])).toMatchObject({
      reason: 'Attest: bad sig',
    })
    // signed by someone else for the caller
    const other = privateKeyToAccount(outsider.privateKey)
    const forged = await other.signTypedData({
      domain,
      types,
      primaryType: 'Attest',
      message: { txid, sha256Expected: sha, storer: storer.address, nonce: nonce + 1n },
    })
    expect(await revertOf(governor.privateKey, d.storageAttest, abi, 'attest', [txid, sha, forged])).toMatchObject({
      reason: 'Attest: bad sig',
    })
    // a valid signature submitted by another caller
    const own = await storer.signTypedData({
      domain,
      types,
      primaryType: 'Attest',
      message: { txid, sha256Expected: sha, storer: other.address, nonce: 0n },
    })
    expect(await revertOf(outsider.privateKey, d.storageAttest, abi, 'attest', [txid, sha, own])).toMatchObject({
      reason: 'Attest: bad sig',
    })
  })
  it('storageAttestor (for the storage verifier) attests a verified upload: nonces 0, 1 in StorageVerified', async () => {
    const client = storageAttestor({ rpcUrl: anvil.url, chainId: 8453, contract: d.storageAttest, storerKey: harvester.privateKey, pollingIntervalMs: 50 })
    const arTxId = randomBytes(32).toString('base64url')
    const sha = randomBytes(32).toString('hex')
    const first = await client.attest(arTxId, sha)
    const second = await client.attest(arTxId, sha)
    expect([first.nonce, second.nonce]).toEqual([0n, 1n])
    const receipt = await pub.getTransactionReceipt({ hash: second.txHash })
    const [event] = parseEventLogs({ abi: storageAttestAbi, eventName: 'StorageVerified', logs: receipt.logs })
    expect(event?.args).toEqual({ storer: harvester.address, txid: arTxIdToBytes32(arTxId), sha256Expected: `0x${sha}`, nonce: 1n })
  })
})

describe('Treasury on Anvil (mock venue)', () => {
  const abi = art.Treasury.abi as Abi
  const erc20 = mocks.MockERC20.abi as Abi
  const Q96 = 2n ** 96n
  const balance = (token: Address, who: Address) =>
    pub.readContract({ address: token, abi: erc20, functionName: 'balanceOf', args: [who] }) as Promise<bigint>

  it('config, harvest through the router to the sink, threshold, pause, nothing to harvest, roles', async () => {
    const { war, usdc, oracle, router } = d.treasuryVenue
    expect(await pub.readContract({ address: d.treasury, abi, functionName: 'harvestBps' })).toBe(1000)
    expect(await pub.readContract({ address: d.treasury, abi, functionName: 'twapWindow' })).toBe(1800)
    await send(deployer.privateKey, war, erc20, 'mint', [d.treasury, 1_000_000n])
    await send(deployer.privateKey, router, mocks.MockSwapRouter.abi as Abi, 'setRate', [3n, 1n])
    await send(deployer.privateKey, oracle, mocks.MockTwapOracle.abi as Abi, 'setPrice', [2n * Q96])

    expect(await revertOf(harvester.privateKey, d.treasury, abi, 'setConfig', [2n * Q96, 2000, 900, sink])).toMatchObject({
      errorName: 'AccessControlUnauthorizedAccount',
      args: [harvester.address, ROLE.GOVERNOR],
    })
    expect(await revertOf(governor.privateKey, d.treasury, abi, 'setConfig', [2n * Q96, 10_001, 900, sink])).toMatchObject({ reason: 'bps' })
    const cfg = await send(governor.privateKey, d.treasury, abi, 'setConfig', [2n * Q96, 2000, 900, sink])
    expect(cfg[0]).toMatchObject({ eventName: 'ConfigUpdated', args: { priceX96: 2n * Q96, bps: 2000, twap: 900, sink } })

    expect(await revertOf(governor.privateKey, d.treasury, abi, 'harvest', [0n])).toMatchObject({
      errorName: 'AccessControlUnauthorizedAccount',
      args: [governor.address, ROLE.HARVESTER],
    })
    const h = await send(harvester.privateKey, d.treasury, abi, 'harvest', [600_000n])
    expect(h.find((l) => l.eventName === 'Harvested')).toMatchObject({ args: { warIn: 200_000n, usdcOut: 600_000n, sentToSink: 600_000n } })
    expect(await balance(war, d.treasury)).toBe(800_000n)
    expect(await balance(usdc, sink)).toBe(600_000n)

    await send(deployer.privateKey, oracle, mocks.MockTwapOracle.abi as Abi, 'setPrice', [2n * Q96 - 1n])
    expect(await revertOf(harvester.privateKey, d.treasury, abi, 'harvest', [0n])).toMatchObject({ reason: 'below threshold' })
    await send(deployer.privateKey, oracle, mocks.MockTwapOracle.abi as Abi, 'setPrice', [2n * Q96])

    await send(governor.privateKey, d.treasury, abi, 'pause', [])
    expect(await revertOf(harvester.privateKey, d.treasury, abi, 'harvest', [0n])).toMatchObject({ errorName: 'EnforcedPause' })
    expect(await revertOf(outsider.privateKey, d.treasury, abi, 'unpause', [])).toMatchObject({ errorName: 'AccessControlUnauthorizedAccount' })
    await send(governor.privateKey, d.treasury, abi, 'unpause', [])
    await send(harvester.privateKey, d.treasury, abi, 'harvest', [0n])
    expect(await balance(war, d.treasury)).toBe(640_000n)

    expect(await revertOf(outsider.privateKey, d.treasury, abi, 'rescue', [war, outsider.address, 1n])).toMatchObject({
      errorName: 'AccessControlUnauthorizedAccount',
    })
    await send(governor.privateKey, d.treasury, abi, 'rescue', [war, governor.address, 640_000n])
    expect(await balance(war, governor.address)).toBe(640_000n)
    expect(await revertOf(harvester.privateKey, d.treasury, abi, 'harvest', [0n])).toMatchObject({ reason: 'nothing to harvest' })
  })
})

/** Seed 000 §6.2, names and Solidity types as the contracts emit them. */
const SEED_EVENTS: Record<string, { contract: 'StorageAttest' | 'ReceiptBatches' | 'Treasury'; args: [string, string, boolean][] }> = {
  StorageVerified: {
    contract: 'StorageAttest',
    args: [['storer', 'address', true], ['txid', 'bytes32', true], ['sha256Expected', 'bytes32', false], ['nonce', 'uint256', false]],
  },
  RootCommitted: {
    contract: 'ReceiptBatches',
    args: [['epoch', 'uint64', true], ['root', 'bytes32', false], ['leafCount', 'uint64', false], ['arweaveTx', 'bytes32', false]],
  },
  Stored: {
    contract: 'ReceiptBatches',
    args: [
      ['payer', 'address', true],
      ['arTxid', 'bytes32', true],
      ['sizeBytes', 'uint256', false],
      ['paidAtomics', 'uint256', false],
      ['currency', 'uint16', false],
      ['epoch', 'uint64', false],
    ],
  },
  Harvested: { contract: 'Treasury', args: [['warIn', 'uint256', false], ['usdcOut', 'uint256', false], ['sentToSink', 'uint256', false]] },
  ConfigUpdated: {
    contract: 'Treasury',
    args: [['priceX96', 'uint256', false], ['bps', 'uint16', false], ['twap', 'uint32', false], ['sink', 'address', false]],
  },
}

function abiEvent(contract: keyof typeof art, name: string): AbiEvent {
  const e = (art[contract].abi as Abi).find((x) => x.type === 'event' && x.name === name)
  if (!e) throw new Error(`${contract} has no event ${name}`)
  return e as AbiEvent
}

describe('contract events', () => {
  it('match seed 000 §6.2: names, argument order, types and indexed flags', () => {
    for (const [name, spec] of Object.entries(SEED_EVENTS)) {
      const e = abiEvent(spec.contract, name)
      expect(e.inputs.map((i) => [i.name, i.type, Boolean(i.indexed)]), name).toEqual(spec.args)
    }
  })

  const asyncapiPath = join(import.meta.dirname, '..', 'asyncapi', 'events.yaml')
  it.skipIf(!existsSync(asyncapiPath))('match asyncapi/events.yaml: payload properties in order, x-solidity-type, x-indexed', () => {
    const doc = parseYaml(readFileSync(asyncapiPath, 'utf8')) as {
      components: { messages: Record<string, { payload: { required: string[]; properties: Record<string, Record<string, unknown>> } }> }
    }
    for (const [name, spec] of Object.entries(SEED_EVENTS)) {
      const message = doc.components.messages[name]
      expect(message, `asyncapi message ${name}`).toBeDefined()
      const props = Object.entries(message!.payload.properties)
      const fromAbi = abiEvent(spec.contract, name).inputs.map((i) => [i.name, i.type, Boolean(i.indexed)])
      expect(props.map(([k, v]) => [k, v['x-solidity-type'], v['x-indexed'] === true]), name).toEqual(fromAbi)
      expect([...message!.payload.required].sort(), `${name} required`).toEqual(fromAbi.map(([n]) => n).sort())
    }
  })
})

describe('gateway ABI subset (src/batch/abi.ts)', () => {
  it('is part of the compiled contracts ABI, item for item', () => {
    const compiled = (abi: Abi) => new Set(abi.filter((x) => x.type !== 'constructor').map((x) => formatAbiItem(x as never)))
    const rb = compiled(art.ReceiptBatches.abi as Abi)
    const sa = compiled(art.StorageAttest.abi as Abi)
    for (const item of receiptBatchesAbi) expect(rb, formatAbiItem(item)).toContain(formatAbiItem(item))
    for (const item of storageAttestAbi) expect(sa, formatAbiItem(item)).toContain(formatAbiItem(item))
  })
})
