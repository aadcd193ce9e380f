/**
 * The subset of Go's text/template that Ollama prompt templates use:
 * - text, `{{ pipeline }}` output, `{{- … -}}` whitespace trimming, `{{/* comments *\/}}`;
 * - `if` / `else if` / `else` / `end`, `range` (with `$i, $v :=`, and `else`), `with`;
 * - `$x := …` / `$x = …`, fields (`.A.B`, `$.A`, `$v.A`), string/number/bool literals, parentheses, `|`;
 * - functions `eq ne lt le gt ge and or not len slice index json print`.
 * Anything else (`define`, `template`, `block`, `printf`, unknown functions or fields) is a `TemplateError`, so a
 * template is either rendered as Go would or refused — never half-applied.
 */

export class TemplateError extends Error {}

type Expr =
  | { k: 'lit'; v: unknown }
  | { k: 'field'; base: 'dot' | 'root' | string; path: string[] }
  | { k: 'call'; fn: string; args: Expr[] }
type Node =
  | { k: 'text'; text: string }
  | { k: 'out'; expr: Expr; assign?: { name: string; declare: boolean } }
  | { k: 'if'; branches: Array<{ cond: Expr; body: Node[] }>; otherwise: Node[] }
  | { k: 'with'; expr: Expr; body: Node[]; otherwise: Node[] }
  | { k: 'range'; expr: Expr; vars: string[]; body: Node[]; otherwise: Node[] }

const FUNCTIONS = new Set(['eq', 'ne', 'lt', 'le', 'gt', 'ge', 'and', 'or', 'not', 'len', 'slice', 'index', 'json', 'print'])

/** A render that would write more than its `maxChars`: stopped there, not finished. */
export class TemplateTooLargeError extends TemplateError {}

/** `render`'s `maxChars` bounds what it writes: nested ranges make a template's output grow as a power of its input. */
export type CompiledTemplate = { render(data: Record<string, unknown>, maxChars?: number): string; fields: Set<string> }

export function compileGoTemplate(source: string): CompiledTemplate {
  const fields = new Set<string>()
  const nodes = parse(lex(source), fields)
  return {
    render: (data, maxChars = Infinity) => renderNodes(nodes, { dot: data, root: data, vars: new Map([['$', data]]), budget: { left: maxChars, max: maxChars } }),
    fields,
  }
}

type Piece = { text: string } | { action: string }

function lex(source: string): Piece[] {
  const pieces: Piece[] = []
  let i = 0
  let trimNext = false
  while (i < source.length) {
    const open = source.indexOf('{{', i)
    let text = source.slice(i, open < 0 ? source.length : open)
    if (trimNext) text = text.replace(/^\s+/, '')
    trimNext = false
    if (open < 0) {
      pieces.push({ text })
      break
    }
    let start = open + 2
    if (source.startsWith('- ', start) || (source[start] === '-' && /\s/.test(source[start + 1] ?? ''))) {
      text = text.replace(/\s+$/, '')
      start += 1
    }
    if (text) pieces.push({ text })
    const close = source.indexOf('}}', start)
    if (close < 0) throw new TemplateError('unclosed action')
    let end = close
    if (source[close - 1] === '-' && /\s/.test(source[close - 2] ?? '')) {
      trimNext = true
      end -= 1
    }
    const action = source.slice(start, end).trim()
    if (!(action.startsWith('/*') && action.endsWith('*/'))) pieces.push({ action })
    i = close + 2
  }
  return pieces
}

function tokenize(action: string): string[] {
  const tokens: string[] = []
  const re = /\s*("(?:[^"\\]|\\.)*"|`[^`]*`|:=|[()|,=]|[^\s()|,=]+)/y
  let m: RegExpExecArray | null
  while (re.lastIndex < action.length && (m = re.exec(action))) tokens.push(m[1]!)
  if (action.slice(re.lastIndex).trim() !== '') throw new TemplateError(`cannot read "${action}"`)
  return tokens
}

function parse(pieces: Piece[], fields: Set<string>): Node[] {
  let pos = 0
  const block = (terminators: string[]): { nodes: Node[]; end: string[] } => {
    const nodes: Node[] = []
    while (pos < pieces.length) {
      const piece = pieces[pos++]!
      if ('text' in piece) {
        nodes.push({ k: 'text', text: piece.text })
        continue
      }
      const tokens = tokenize(piece.action)
      const head = tokens[0] ?? ''
      if (terminators.includes(head)) return { nodes, end: tokens }
      if (head === 'if') {
        const branches = [{ cond: expression(tokens.slice(1), fields), body: [] as Node[] }]
        let otherwise: Node[] = []
        for (;;) {
          const inner = block(['else', 'end'])
          branches.at(-1)!.body = inner.nodes
          if (inner.end[0] === 'else' && inner.end[1] === 'if') {
            branches.push({ cond: expression(inner.end.slice(2), fields), body: [] })
            continue
          }
          if (inner.end[0] === 'else') otherwise = block(['end']).nodes
          break
        }
        nodes.push({ k: 'if', branches, otherwise })
      } else if (head === 'range' || head === 'with') {
        let rest = tokens.slice(1)
        const vars: string[] = []
        const decl = rest.indexOf(':=')
        if (decl >= 0 && head === 'range') {
          vars.push(...rest.slice(0, decl).filter((t) => t !== ','))
          if (vars.length === 0 || vars.length > 2 || vars.some((v) => !v.startsWith('$'))) throw new TemplateError(`bad range "${piece.action}"`)
          rest = rest.slice(decl + 1)
        }
        const expr = expression(rest, fields)
        const body = block(['else', 'end'])
        const otherwise = body.end[0] === 'else' ? block(['end']).nodes : []
        nodes.push(head === 'range' ? { k: 'range', expr, vars, body: body.nodes, otherwise } : { k: 'with', expr, body: body.nodes, otherwise })
      } else if (head === 'else' || head === 'end') {
        throw new TemplateError(`unexpected {{${head}}}`)
      } else if (tokens[0]?.startsWith('$') && (tokens[1] === ':=' || tokens[1] === '=')) {
        nodes.push({ k: 'out', expr: expression(tokens.slice(2), fields), assign: { name: tokens[0], declare: tokens[1] === ':=' } })
      } else {
        if (['define', 'template', 'block', 'break', 'continue'].includes(head)) throw new TemplateError(`{{${head}}} is not supported`)
        nodes.push({ k: 'out', expr: expression(tokens, fields) })
      }
    }
    if (terminators.length > 0) throw new TemplateError(`missing {{end}}`)
    return { nodes, end: [] }
  }
  return block([]).nodes
}

/** A pipeline: `cmd | cmd …`, each command a function call or a single operand. */
function expression(tokens: string[], fields: Set<string>): Expr {
  if (tokens.length === 0) throw new TemplateError('missing value')
  const stages: string[][] = [[]]
  let depth = 0
  for (const t of tokens) {
    if (t === '(') depth++
    if (t === ')') depth--
    if (t === '|' && depth === 0) stages.push([])
    else stages.at(-1)!.push(t)
  }
  let expr: Expr | undefined
  for (const stage of stages) {
    const args = operands(stage, fields)
    if (expr !== undefined) args.push(expr)
    expr = command(args)
  }
  return expr!
}

type Arg = Expr | { k: 'fn'; name: string }

function operands(tokens: string[], fields: Set<string>): Arg[] {
  const out: Arg[] = []
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!
    if (t === '(') {
      let depth = 1
      let j = i + 1
      for (; j < tokens.length && depth > 0; j++) {
        if (tokens[j] === '(') depth++
        if (tokens[j] === ')') depth--
      }
      if (depth !== 0) throw new TemplateError('unbalanced parentheses')
      out.push(expression(tokens.slice(i + 1, j - 1), fields))
      i = j - 1
    } else out.push(operand(t, fields))
  }
  return out
}

function operand(t: string, fields: Set<string>): Arg {
  if (t.startsWith('"')) return { k: 'lit', v: JSON.parse(t) as string }
  if (t.startsWith('`')) return { k: 'lit', v: t.slice(1, -1) }
  if (/^-?\d+(\.\d+)?$/.test(t)) return { k: 'lit', v: Number(t) }
  if (t === 'true' || t === 'false') return { k: 'lit', v: t === 'true' }
  if (t === 'nil') return { k: 'lit', v: undefined }
  if (t === '.') return { k: 'field', base: 'dot', path: [] }
  if (t.startsWith('.')) {
    const path = t.slice(1).split('.')
    fields.add(path[0]!)
    return { k: 'field', base: 'dot', path }
  }
  if (t.startsWith('$')) {
    const [name, ...path] = t.split('.')
    if (name === '$' && path[0]) fields.add(path[0])
    return { k: 'field', base: name === '$' ? 'root' : name!, path }
  }
  if (FUNCTIONS.has(t)) return { k: 'fn', name: t }
  throw new TemplateError(`function "${t}" is not supported`)
}

function command(args: Arg[]): Expr {
  const [head, ...rest] = args
  if (!head) throw new TemplateError('empty command')
  if (head.k === 'fn') {
    if (rest.some((a) => a.k === 'fn')) throw new TemplateError('a function name used as a value')
    return { k: 'call', fn: head.name, args: rest as Expr[] }
  }
  if (rest.length > 0) throw new TemplateError("can't give arguments to a non-function")
  return head
}

type Scope = { dot: unknown; root: unknown; vars: Map<string, unknown>; budget: { left: number; max: number } }

/** `text` as written by a render, counted against its budget (every output is made of these, so all is counted). */
function written(scope: Scope, text: string): string {
  scope.budget.left -= text.length
  if (scope.budget.left < 0) throw new TemplateTooLargeError(`the template renders more than ${scope.budget.max} characters`)
  return text
}

function renderNodes(nodes: Node[], scope: Scope): string {
  let out = ''
  for (const node of nodes) {
    switch (node.k) {
      case 'text':
        out += written(scope, node.text)
        break
      case 'out': {
        const value = evaluate(node.expr, scope)
        if (node.assign) {
          if (!node.assign.declare && !scope.vars.has(node.assign.name)) throw new TemplateError(`undefined variable ${node.assign.name}`)
          scope.vars.set(node.assign.name, value)
        } else out += written(scope, print(value))
        break
      }
      case 'if': {
        const branch = node.branches.find((b) => truthy(evaluate(b.cond, scope)))
        out += renderNodes(branch ? branch.body : node.otherwise, child(scope, scope.dot))
        break
      }
      case 'with': {
        const value = evaluate(node.expr, scope)
        out += truthy(value) ? renderNodes(node.body, child(scope, value)) : renderNodes(node.otherwise, child(scope, scope.dot))
        break
      }
      case 'range': {
        const value = evaluate(node.expr, scope)
        const items: Array<[unknown, unknown]> = Array.isArray(value)
          ? value.map((v, i) => [i, v])
          : value && typeof value === 'object'
            ? Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1))
            : typeof value === 'number'
              ? Array.from({ length: value }, (_, i) => [i, i])
              : []
        if (items.length === 0) out += renderNodes(node.otherwise, child(scope, scope.dot))
        for (const [key, item] of items) {
          const inner = child(scope, item)
          if (node.vars.length === 1) inner.vars.set(node.vars[0]!, item)
          if (node.vars.length === 2) {
            inner.vars.set(node.vars[0]!, key)
            inner.vars.set(node.vars[1]!, item)
          }
          out += renderNodes(node.body, inner)
        }
        break
      }
    }
  }
  return out
}

function child(scope: Scope, dot: unknown): Scope {
  return { dot, root: scope.root, vars: new Map(scope.vars), budget: scope.budget }
}

function evaluate(expr: Expr, scope: Scope): unknown {
  if (expr.k === 'lit') return expr.v
  if (expr.k === 'field') {
    let value: unknown
    if (expr.base === 'dot') value = scope.dot
    else if (expr.base === 'root') value = scope.root
    else if (scope.vars.has(expr.base)) value = scope.vars.get(expr.base)
    else throw new TemplateError(`undefined variable ${expr.base}`)
    for (const name of expr.path) {
      if (value === null || typeof value !== 'object' || !(name in value)) throw new TemplateError(`can't evaluate field ${name}`)
      value = (value as Record<string, unknown>)[name]
    }
    return value
  }
  const args = expr.args
  const v = (i: number) => evaluate(args[i]!, scope)
  const arity = (n: number) => {
    if (args.length < n) throw new TemplateError(`${expr.fn}: not enough arguments`)
  }
  switch (expr.fn) {
    case 'eq':
      arity(2)
      return args.slice(1).some((_, i) => v(0) === v(i + 1))
    case 'ne':
      arity(2)
      return v(0) !== v(1)
    case 'lt':
      arity(2)
      return (v(0) as number) < (v(1) as number)
    case 'le':
      arity(2)
      return (v(0) as number) <= (v(1) as number)
    case 'gt':
      arity(2)
      return (v(0) as number) > (v(1) as number)
    case 'ge':
      arity(2)
      return (v(0) as number) >= (v(1) as number)
    case 'and': {
      arity(1)
      let last: unknown
      for (let i = 0; i < args.length; i++) if (!truthy((last = v(i)))) return last
      return last
    }
    case 'or': {
      arity(1)
      let last: unknown
      for (let i = 0; i < args.length; i++) if (truthy((last = v(i)))) return last
      return last
    }
    case 'not':
      arity(1)
      return !truthy(v(0))
    case 'len': {
      arity(1)
      const x = v(0)
      if (typeof x === 'string' || Array.isArray(x)) return x.length
      if (x && typeof x === 'object') return Object.keys(x).length
      throw new TemplateError('len of a value without length')
    }
    case 'slice': {
      arity(1)
      const x = v(0)
      if (typeof x !== 'string' && !Array.isArray(x)) throw new TemplateError('slice of a value that is not a list or string')
      return x.slice((args.length > 1 ? v(1) : 0) as number, (args.length > 2 ? v(2) : x.length) as number)
    }
    case 'index': {
      arity(2)
      let x = v(0)
      for (let i = 1; i < args.length; i++) x = (x as Record<string | number, unknown> | undefined)?.[v(i) as string | number]
      return x
    }
    case 'json':
      arity(1)
      return JSON.stringify(v(0))
    case 'print':
      return args.map((_, i) => print(v(i))).join('')
    default:
      throw new TemplateError(`function "${expr.fn}" is not supported`)
  }
}

function truthy(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0
  if (value && typeof value === 'object') return Object.keys(value).length > 0
  return Boolean(value)
}

function print(value: unknown): string {
  if (value === undefined || value === null) return '<no value>'
  if (typeof value === 'object') return JSON.stringify(value)
  return String(value)
}
