/**
 * The subset of the Arweave gateway GraphQL schema (arweave.net / ar.io `/graphql`) that clients use to read a
 * data item's metadata: `transaction(id)` and `transactions(ids, owners, recipients, tags, block, first,
 * after, sort)`, with the real type and field names. Executed by graphql-js over the devnet ItemStore.
 */
import { buildSchema, graphql, type ExecutionResult } from 'graphql'
import type { ItemStore, StoredItem } from '../upstream/ItemStore.js'
import { createHash } from 'node:crypto'

const SDL = /* GraphQL */ `
  type Query {
    transaction(id: ID!): Transaction
    transactions(
      ids: [ID!]
      owners: [String!]
      recipients: [String!]
      tags: [TagFilter!]
      bundledIn: [ID!]
      block: BlockFilter
      first: Int = 10
      after: String
      sort: SortOrder = HEIGHT_DESC
    ): TransactionConnection!
  }
  input TagFilter {
    name: String!
    values: [String!]!
    op: TagOperator = EQ
  }
  enum TagOperator { EQ NEQ }
  input BlockFilter {
    min: Int
    max: Int
  }
  enum SortOrder { HEIGHT_ASC HEIGHT_DESC }
  type TransactionConnection {
    pageInfo: PageInfo!
    edges: [TransactionEdge!]!
  }
  type PageInfo { hasNextPage: Boolean! }
  type TransactionEdge {
    cursor: String!
    node: Transaction!
  }
  type Transaction {
    id: ID!
    anchor: String!
    signature: String!
    recipient: String!
    owner: Owner!
    fee: Amount!
    quantity: Amount!
    data: MetaData!
    tags: [Tag!]!
    block: Block
    bundledIn: Bundle
  }
  type Owner {
    address: String!
    key: String!
  }
  type Amount {
    winston: String!
    ar: String!
  }
  type MetaData {
    size: String!
    type: String
  }
  type Tag {
    name: String!
    value: String!
  }
  type Block {
    id: ID!
    timestamp: Int!
    height: Int!
    previous: ID!
  }
  type Bundle { id: ID! }
`

const schema = buildSchema(SDL)
const ZERO = { winston: '0', ar: '0.000000000000' }

/** The devnet's stand-in bundle for a block: a stable id derived from the block hash. */
export function bundleIdOf(blockHash: string): string {
  return createHash('sha256').update(`bundle:${blockHash}`).digest('base64url')
}

function node(m: StoredItem) {
  return {
    id: m.id,
    anchor: m.anchor ?? '',
    signature: m.signature ?? '',
    recipient: m.target ?? '',
    owner: { address: m.ownerAddress, key: m.ownerKey ?? '' },
    fee: ZERO,
    quantity: ZERO,
    data: { size: String(m.dataSize), type: m.contentType },
    tags: m.tags,
    block:
      m.blockHeight !== undefined && m.blockHash
        ? { id: m.blockHash, timestamp: m.blockTimestamp ?? 0, height: m.blockHeight, previous: m.blockPrevious ?? '' }
        : null,
    bundledIn: m.blockHash ? { id: bundleIdOf(m.blockHash) } : null,
  }
}

interface TxArgs {
  ids?: string[]
  owners?: string[]
  recipients?: string[]
  tags?: { name: string; values: string[]; op: 'EQ' | 'NEQ' }[]
  bundledIn?: string[]
  block?: { min?: number; max?: number }
  first: number
  after?: string
  sort: 'HEIGHT_ASC' | 'HEIGHT_DESC'
}

function matches(m: StoredItem, a: TxArgs): boolean {
  if (a.ids && !a.ids.includes(m.id)) return false
  if (a.owners && !a.owners.includes(m.ownerAddress)) return false
  if (a.recipients && !a.recipients.includes(m.target ?? '')) return false
  if (a.bundledIn && !(m.blockHash && a.bundledIn.includes(bundleIdOf(m.blockHash)))) return false
  if (a.block) {
    if (m.blockHeight === undefined) return false
    if (a.block.min !== undefined && m.blockHeight < a.block.min) return false
    if (a.block.max !== undefined && m.blockHeight > a.block.max) return false
  }
  for (const f of a.tags ?? []) {
    const vals = m.tags.filter((t) => t.name === f.name).map((t) => t.value)
    if (f.op === 'NEQ' ? vals.length === 0 || vals.every((v) => f.values.includes(v)) : !vals.some((v) => f.values.includes(v))) return false
  }
  return true
}

function rootValue(store: ItemStore) {
  return {
    transaction: ({ id }: { id: string }) => {
      const m = store.get(id)
      return m ? node(m) : null
    },
    transactions: (a: TxArgs) => {
      const first = Math.max(0, Math.min(a.first ?? 10, 100))
      // Pending items (no block) sort as the newest, as on arweave.net.
      const h = (m: StoredItem) => m.blockHeight ?? Number.MAX_SAFE_INTEGER
      const all = store
        .all()
        .filter((m) => matches(m, a))
        .sort((x, y) => (a.sort === 'HEIGHT_ASC' ? h(x) - h(y) : h(y) - h(x)) || x.timestamp - y.timestamp || x.id.localeCompare(y.id))
      const start = a.after ? Number(Buffer.from(a.after, 'base64url').toString()) + 1 : 0
      const page = all.slice(start, start + first)
      return {
        pageInfo: { hasNextPage: start + first < all.length },
        edges: page.map((m, i) => ({ cursor: Buffer.from(String(start + i)).toString('base64url'), node: node(m) })),
      }
    },
  }
}

export function runGraphql(store: ItemStore, query: string, variables?: Record<string, unknown>, operationName?: string): Promise<ExecutionResult> {
  return graphql({ schema, source: query, rootValue: rootValue(store), variableValues: variables, operationName })
}
