/**
 * Lists in the docs that the documents already hold, written between markers instead of kept by hand:
 * `docs/design.md`'s gateway operations come from `openapi/gateway.yaml`. `npm run generate` writes them;
 * `npm run check:generated` fails when a doc is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { parse } from 'yaml'

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const

type Operation = { operationId?: string; summary?: string; security?: Record<string, unknown>[]; 'x-designed'?: boolean }
type Document = { security?: Record<string, unknown>[]; paths?: Record<string, Record<string, Operation>> }

/** Who may call: the operation's security requirements, alternatives joined by "or". */
function securityOf(operation: Operation, document: Document): string {
  const requirements = operation.security ?? document.security ?? []
  if (requirements.length === 0) return 'public'
  return requirements.map((r) => (Object.keys(r).length === 0 ? 'none' : Object.keys(r).join(' + '))).join(' or ')
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\s+/g, ' ').trim()

/** The gateway's operations as a Markdown table, in the document's order. */
export function renderOperationTable(document: Document): string {
  const rows = ['| operationId | route | security | summary |', '| --- | --- | --- | --- |']
  for (const [route, item] of Object.entries(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item[method]
      if (!operation?.operationId) continue
      const designed = operation['x-designed'] ? ' (designed)' : ''
      rows.push(`| \`${operation.operationId}\` | \`${method.toUpperCase()} ${route}\` | ${securityOf(operation, document)} | ${cell(operation.summary ?? '')}${designed} |`)
    }
  }
  return rows.join('\n')
}

export type DocList = { file: string; name: string; render: () => string }

export function docLists(root: string): DocList[] {
  return [
    {
      file: path.join(root, 'docs', 'design.md'),
      name: 'gateway-operations',
      render: () => renderOperationTable(parse(readFileSync(path.join(root, 'openapi', 'gateway.yaml'), 'utf8')) as Document),
    },
  ]
}

/** `text` with the block between the list's markers replaced by `body`; throws when the markers are missing. */
export function replaceBetweenMarkers(text: string, name: string, body: string): string {
  const start = `<!-- generated:${name} (scripts/docLists.ts; do not edit by hand) -->`
  const end = `<!-- /generated:${name} -->`
  const from = text.indexOf(start)
  const to = text.indexOf(end)
  if (from < 0 || to < from) throw new Error(`markers of ${name} not found (expected ${start} … ${end})`)
  return `${text.slice(0, from + start.length)}\n${body}\n${text.slice(to)}`
}

/** Writes every list (`write`) or returns the files whose list is stale. */
export function syncDocLists(root: string, mode: 'write' | 'check'): string[] {
  const stale: string[] = []
  for (const list of docLists(root)) {
    const text = readFileSync(list.file, 'utf8')
    const next = replaceBetweenMarkers(text, list.name, list.render())
    if (next === text) continue
    stale.push(`${path.relative(root, list.file)} (${list.name})`)
    if (mode === 'write') writeFileSync(list.file, next)
  }
  return stale
}
