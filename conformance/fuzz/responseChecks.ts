/**
 * The checks every response gets, whatever the request: no server error, the document's status, media type,
 * headers and body (one document check split by what it found: DocumentClient's `documentProblems`), no server
 * path in an error, the response time, and x402's payment headers wherever they appear.
 */
import { documentProblems, repoRoot } from '../DocumentClient.js'
import type { Server } from '../types.js'
import type { CheckName, CheckResult } from './checks.js'
import { x402HeaderChecks } from './x402Checks.js'

/** Absolute server paths in a body: the repository, temp and home directories, stack frames. */
const SERVER_PATH = new RegExp(`${repoRoot.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}|(?:^|[\\s"'(=:])/(?:work|home|root|tmp|var|usr|opt|srv|app)/[\\w.@-]+/|node_modules/|\\bat [^\\n]*\\.[cm]?[jt]s:\\d+`)

/** Which check a document problem belongs to (ResponseValidator's and documentProblems' wording). */
export function checkOfDocumentProblem(problem: string): CheckName {
  if (/^status \d+ is not documented|is not in the document/.test(problem)) return 'status_code_conformance'
  if (/^(required )?header |without a \/login location/.test(problem)) return 'response_headers_conformance'
  if (/^media type |documents no body but one was sent|documents a body but none was sent/.test(problem)) return 'content_type_conformance'
  return 'response_schema_conformance'
}

export type ResponseSeen = { server: Server; method: string; path: string; status: number; headers: Headers; text: string; ms: number }

export function responseChecks(r: ResponseSeen, maxResponseMs: number): CheckResult[] {
  const results: CheckResult[] = []
  results.push(r.status >= 500 && r.status !== 502 ? { check: 'not_a_server_error', problem: `server error ${r.status}` } : { check: 'not_a_server_error' })
  const found = new Map<CheckName, string[]>()
  for (const problem of documentProblems(r.server, r.method, r.path, r.status, r.headers, r.text)) {
    const check = checkOfDocumentProblem(problem)
    found.set(check, [...(found.get(check) ?? []), problem])
  }
  // A body without a Content-Type leaves the client to guess (the document check assumes JSON).
  if (r.text !== '' && !r.headers.get('content-type') && r.method !== 'HEAD') found.set('content_type_conformance', [...(found.get('content_type_conformance') ?? []), 'a body was sent without a Content-Type'])
  for (const check of ['status_code_conformance', 'content_type_conformance', 'response_headers_conformance', 'response_schema_conformance'] as const) {
    const problems = found.get(check)
    results.push(problems ? { check, problem: `document: ${problems.join('; ')}` } : { check })
  }
  const leak = r.status >= 400 ? SERVER_PATH.exec(r.text) : null
  results.push(leak ? { check: 'no_server_path', problem: `reveals a server path: ${JSON.stringify(leak[0])}` } : { check: 'no_server_path' })
  results.push(r.ms > maxResponseMs ? { check: 'max_response_time', problem: `answered in ${r.ms} ms, over the ${maxResponseMs} ms limit` } : { check: 'max_response_time' })
  results.push(...x402HeaderChecks(r))
  return results
}
