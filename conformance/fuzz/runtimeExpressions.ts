/**
 * OpenAPI runtime expressions, as a Link Object's `parameters` and `requestBody` use them: `$url`, `$method`,
 * `$statusCode`, `$request.path.<name>`, `$request.query.<name>`, `$request.header.<name>`,
 * `$request.body#/<json pointer>`, `$response.header.<name>`, `$response.body#/<json pointer>`, alone or
 * embedded in a string in braces (`Bearer {$response.body#/jwt}`). In a `requestBody` object every string value
 * is evaluated the same way, so a link can pass a body built from the previous exchange.
 */
export type ExchangeValues = {
  url: string
  method: string
  status: number
  request: { path: Record<string, string>; query: URLSearchParams; headers: Record<string, string>; body: unknown }
  response: { headers: Headers; body: unknown }
}

function pointer(value: unknown, ptr: string): unknown {
  if (ptr === '' || ptr === '/') return value
  let node = value
  for (const raw of ptr.replace(/^\//, '').split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, key)) return undefined
    node = (node as Record<string, unknown>)[key]
  }
  return node
}

const headerOf = (headers: Record<string, string>, name: string) => Object.entries(headers).find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1]

/** The value of one expression (undefined when the exchange does not have it). */
export function evaluateExpression(expression: string, x: ExchangeValues): unknown {
  if (expression === '$url') return x.url
  if (expression === '$method') return x.method
  if (expression === '$statusCode') return x.status
  const body = /^\$(request|response)\.body(?:#(.*))?$/.exec(expression)
  if (body) return pointer(body[1] === 'request' ? x.request.body : x.response.body, decodeURIComponent(body[2] ?? ''))
  const part = /^\$(request|response)\.(path|query|header)\.(.+)$/.exec(expression)
  if (!part) return undefined
  const [, side, where, name] = part as unknown as [string, 'request' | 'response', 'path' | 'query' | 'header', string]
  if (side === 'response') return where === 'header' ? (x.response.headers.get(name) ?? undefined) : undefined
  if (where === 'path') return x.request.path[name]
  if (where === 'query') return x.request.query.get(name) ?? undefined
  return headerOf(x.request.headers, name)
}

/** A link value: an expression, a string with `{expression}`s, an object or array of those, or a literal. */
export function evaluate(value: unknown, x: ExchangeValues): unknown {
  if (typeof value === 'string') {
    if (value.startsWith('$')) return evaluateExpression(value, x)
    if (!/\{\$[^}]+\}/.test(value)) return value
    return value.replace(/\{(\$[^}]+)\}/g, (_m, e: string) => {
      const v = evaluateExpression(e, x)
      return v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v)
    })
  }
  if (Array.isArray(value)) return value.map((v) => evaluate(v, x))
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, evaluate(v, x)]))
  return value
}
