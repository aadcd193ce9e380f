import type { Operation } from 'openapi-backend'

type MatchableRequest = { method: string; path: string }

/**
 * The part of openapi-backend's router the matcher reuses: its public `normalizePath`, so both agree exactly
 * on trailing slashes. The document is mounted at `/` (no `apiRoot`), so every path that starts with `/` is
 * under it.
 */
export type OperationRouter = {
  normalizePath(path: string): string
}

function escapeRegExp(literal: string): string {
  return literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/** `/users/{wallet}/permissions` → `^/users/[^/]+/permissions$` (openapi-backend's own translation). */
function pathTemplateToRegExp(path: string): RegExp {
  return new RegExp(`^${path.replace(/\{[^}]+\}/g, '\0').split('\0').map(escapeRegExp).join('[^/]+')}$`)
}

/**
 * Our own operation matcher, with the same answers as openapi-backend's `matchOperation` (the test compares
 * both on the gateway's and the model server's documents), kept as a module of ours for speed, not patched
 * into the library. Why: the library scans every operation on each call, builds a
 * `RegExp` per operation per call and sorts the candidates with lodash (with 80 operations, tens of µs per
 * match, and a request is matched more than once). Here exact paths are a `Map` lookup and the templates are
 * compiled and sorted once, by the same rule: an exact path with the method wins; otherwise the most specific
 * template (longest literal part, document order on ties) that matches path and method; a path that matches
 * only with other methods is a 405, no match at all a 404 (thrown when `strict`, as the library does).
 */
export function compileOperationMatcher<O extends Operation>(
  router: OperationRouter,
  operations: readonly O[],
): (req: MatchableRequest, strict?: boolean) => O | undefined {
  const exact = new Map<string, Map<string, O>>()
  for (const op of operations) {
    const byMethod = exact.get(op.path) ?? new Map<string, O>()
    if (!byMethod.has(op.method)) byMethod.set(op.method, op)
    exact.set(op.path, byMethod)
  }
  const templates = operations
    .map((op, index) => ({ op, regexp: pathTemplateToRegExp(op.path), specificity: op.path.replace(/\{.*?\}/g, '').length, index }))
    .sort((a, b) => b.specificity - a.specificity || a.index - b.index)

  return (req, strict = false) => {
    let path = req.path?.trim() || ''
    if (!path.startsWith('/')) path = `/${path}`
    const query = path.indexOf('?')
    if (query >= 0) path = path.slice(0, query)
    const method = req.method.trim().toLowerCase()
    const normalized = router.normalizePath(path)
    const hit = exact.get(normalized)?.get(method)
    if (hit) return hit
    let pathMatched = false
    for (const t of templates) {
      if (!t.regexp.test(normalized)) continue
      pathMatched = true
      if (t.op.method === method) return t.op
    }
    if (strict) throw Error(pathMatched ? '405-methodNotAllowed: this method is not registered for the route' : '404-notFound: no route matches request')
    return undefined
  }
}
