/**
 * One error path per API: a refusal is a coded error (src/shared/errors/defineError.ts) whose status lives in the
 * API's catalogue, and one stage renders it. A literal 4xx/5xx written anywhere else is a second error path —
 * the next change to the catalogue would miss it.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = join(import.meta.dirname, '..', '..')
const LITERAL_STATUS = /status: [45]\d{2}\b|\.status\([45]\d{2}\)|statusCode = [45]\d{2}|writeHead\([45]\d{2}/

/** The catalogues (code → status) and the stages that render a coded error or a router refusal. */
const CATALOGUES_AND_RENDERERS = [
  'src/handlers/errorCatalogue.ts', // the gateway's catalogue (the core's rows)
  'src/pipeline/errorStage.ts', // renders any thrown error through it
  'src/x402/paymentRequired.ts', // renders x402's 402 (PAYMENT-REQUIRED header and body)
  'src/modelserver/errors.ts', // the model server's catalogue
  'src/modelserver/registry/ociErrors.ts', // the OCI distribution catalogue (`/v2`)
  'src/shared/http/routerRefusals.ts', // the router's own refusals: no route, no method, unmet security, an invalid request or body
  'src/shared/http/runOperationStages.ts', // a router without an app's on-error: its refusals, else 500
  'src/shared/http/responseValidationStage.ts', // an answer the document does not allow: 500
]

/** The rows each domain plug-in adds to the gateway's catalogue (`errorRows` of its plugin.ts). */
const PLUGIN_ROWS = /^src\/handlers\/[^/]+\/errorRows\.ts$/

type Hit = { file: string; line: number; text: string }

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : sourceFiles(path)
    return /\.ts$/.test(name) && !/\.test\.ts$/.test(name) ? [path] : []
  })
}

/** The lines of `text` that write a literal HTTP error status. */
export function literalStatuses(file: string, text: string): Hit[] {
  return text.split('\n').flatMap((line, i) => (LITERAL_STATUS.test(line) ? [{ file, line: i + 1, text: line.trim() }] : []))
}

const hits = sourceFiles(join(ROOT, 'src')).flatMap((path) => literalStatuses(relative(ROOT, path), readFileSync(path, 'utf8')))

describe('one error path: statuses live in the catalogues', () => {
  it('no source outside the catalogues and their renderers writes a literal error status', () => {
    const stray = hits.filter((h) => !CATALOGUES_AND_RENDERERS.includes(h.file) && !PLUGIN_ROWS.test(h.file))
    expect(stray.map((h) => `${h.file}:${h.line}: ${h.text}`)).toEqual([])
  })

  it('finds the forms a status is written in', () => {
    for (const line of ['return { status: 404, body }', 'res.status(502).json(x)', 'res.statusCode = 429', 'res.writeHead(503, headers)']) {
      expect(literalStatuses('src/x.ts', line), line).toHaveLength(1)
    }
    expect(literalStatuses('src/x.ts', 'return { status: 200, body }')).toEqual([])
  })
})
