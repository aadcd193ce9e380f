/**
 * What a fuzz run exercised, against what the documents describe: operations, the status codes each answered
 * (and the documented ones it never did), the OpenAPI links followed, and the JSON Schema keywords of the request
 * schemas reached by a valid value (positive) or broken by an invalid one (negative). Written as text and JSON.
 */
import type { Operation } from './operations.js'
import { keywordLocations } from './schemaKeywords.js'

export type LinkRef = { server: string; operation: string; status: string; name: string; target: string }

type OperationCoverage = { requests: number; statuses: Map<string, number>; documented: string[]; keywords: string[]; positive: Set<string>; negative: Set<string> }

export type CoverageReport = {
  operations: { documented: number; exercised: number; missing: string[] }
  statuses: { documented: number; seen: number; missing: string[]; undocumentedSeen: string[] }
  links: { documented: number; followed: number; missing: string[]; byLink: Record<string, number> }
  keywords: { documented: number; positive: number; negative: number; exercised: number; missing: string[] }
  byOperation: Record<string, { requests: number; statuses: Record<string, number>; keywords: { total: number; positive: number; negative: number } }>
}

const key = (op: Pick<Operation, 'server' | 'id'>) => `${op.server} ${op.id}`
const linkKey = (l: LinkRef) => `${l.server} ${l.operation} ${l.status} → ${l.name} (${l.target})`

/** The status key a documented response has for an actual status (`404`, `4XX`, `default`). */
export function documentedStatus(documented: string[], status: number): string | undefined {
  const exact = String(status)
  if (documented.includes(exact)) return exact
  const range = `${Math.floor(status / 100)}XX`
  if (documented.includes(range)) return range
  return documented.includes('default') ? 'default' : undefined
}

export class Coverage {
  readonly #operations = new Map<string, OperationCoverage>()
  readonly #links = new Map<string, number>()

  constructor(operations: Operation[], links: LinkRef[]) {
    for (const op of operations) {
      const keywords: string[] = []
      for (const p of op.parameters) if (p.in !== 'cookie') keywordLocations(p.schema, `${p.in}:${p.name}`, 0, keywords)
      for (const [media, schema] of op.body) keywordLocations(schema, `body:${media}`, 0, keywords)
      this.#operations.set(key(op), { requests: 0, statuses: new Map(), documented: op.statuses, keywords, positive: new Set(), negative: new Set() })
    }
    for (const link of links) this.#links.set(linkKey(link), 0)
  }

  response(op: Pick<Operation, 'server' | 'id'>, status: number | undefined): void {
    const c = this.#operations.get(key(op))
    if (!c) return
    c.requests++
    if (status === undefined) return
    const documented = documentedStatus(c.documented, status) ?? String(status)
    c.statuses.set(documented, (c.statuses.get(documented) ?? 0) + 1)
  }

  keywords(op: Pick<Operation, 'server' | 'id'>, positive: Iterable<string>, negative: Iterable<string>): void {
    const c = this.#operations.get(key(op))
    if (!c) return
    for (const k of positive) c.positive.add(k)
    for (const k of negative) c.negative.add(k)
  }

  link(link: LinkRef): void {
    this.#links.set(linkKey(link), (this.#links.get(linkKey(link)) ?? 0) + 1)
  }

  report(): CoverageReport {
    const all = [...this.#operations]
    const missingStatuses: string[] = []
    const undocumentedSeen: string[] = []
    let documentedStatuses = 0
    let seenStatuses = 0
    const keywordMissing: string[] = []
    let keywordTotal = 0
    let positive = 0
    let negative = 0
    let exercised = 0
    const byOperation: CoverageReport['byOperation'] = {}
    for (const [name, c] of all) {
      for (const status of c.documented) {
        documentedStatuses++
        if (c.statuses.has(status)) seenStatuses++
        else missingStatuses.push(`${name} ${status}`)
      }
      for (const status of c.statuses.keys()) if (!c.documented.includes(status)) undocumentedSeen.push(`${name} ${status}`)
      const known = new Set(c.keywords)
      keywordTotal += known.size
      const pos = [...known].filter((k) => c.positive.has(k)).length
      const neg = [...known].filter((k) => c.negative.has(k)).length
      positive += pos
      negative += neg
      for (const k of known) {
        if (c.positive.has(k) || c.negative.has(k)) exercised++
        else keywordMissing.push(`${name} ${k}`)
      }
      byOperation[name] = { requests: c.requests, statuses: Object.fromEntries(c.statuses), keywords: { total: known.size, positive: pos, negative: neg } }
    }
    const links = [...this.#links]
    return {
      operations: { documented: all.length, exercised: all.filter(([, c]) => c.requests > 0).length, missing: all.filter(([, c]) => c.requests === 0).map(([n]) => n) },
      statuses: { documented: documentedStatuses, seen: seenStatuses, missing: missingStatuses, undocumentedSeen },
      links: { documented: links.length, followed: links.filter(([, n]) => n > 0).length, missing: links.filter(([, n]) => n === 0).map(([l]) => l), byLink: Object.fromEntries(links) },
      keywords: { documented: keywordTotal, positive, negative, exercised, missing: keywordMissing },
      byOperation,
    }
  }
}

const percent = (part: number, whole: number) => `${whole === 0 ? 100 : Math.round((part / whole) * 1000) / 10}%`

/** The coverage as a terminal reads it: one line per dimension, then what was never reached (bounded). */
export function formatCoverage(c: CoverageReport, limit = 20): string {
  const list = (items: string[]) => items.slice(0, limit).map((i) => `    ${i}`).concat(items.length > limit ? [`    … ${items.length - limit} more`] : [])
  return [
    `coverage: operations ${c.operations.exercised}/${c.operations.documented} (${percent(c.operations.exercised, c.operations.documented)})`,
    ...list(c.operations.missing),
    `coverage: documented status codes seen ${c.statuses.seen}/${c.statuses.documented} (${percent(c.statuses.seen, c.statuses.documented)})`,
    `coverage: links followed ${c.links.followed}/${c.links.documented} (${percent(c.links.followed, c.links.documented)})`,
    ...list(c.links.missing),
    `coverage: request schema keywords exercised ${c.keywords.exercised}/${c.keywords.documented} (${percent(c.keywords.exercised, c.keywords.documented)}): reached by a valid value ${c.keywords.positive}, broken by an invalid one ${c.keywords.negative}`,
  ].join('\n')
}
