/**
 * Driver `pull-progress`: the machine is the order of the `status` values inside ONE streamed response
 * (seed 001 §3.2). The machine's `request` is sent when the first row runs; each row then checks its kind of
 * line: seen, not before the lines of an earlier row, repeated only when `line.repeat`, carrying
 * `line.fields`. Works against our model server or a real Ollama.
 */
import type { Driver } from '../runner.js'
import type { Expect, Row } from '../types.js'
import { fill } from './http.js'

type Line = Record<string, unknown>
type PullRow = Row & { line: { pattern: string; repeat?: boolean; fields?: string[] } }

export const pullProgressDriver: Driver = ({ machine, target, client, vars }) => {
  const base = target.urls[machine.server]
  if (base) vars.host ??= new URL(base).host
  for (const [k, v] of Object.entries(vars)) vars[k] = fill(v, vars) as string
  const rows = machine.rows as PullRow[]
  let lines: Promise<{ head: string[]; lines: Line[] }> | undefined
  const send = async () => {
    const request = fill(machine.request, vars) as { method: string; path: string; body?: unknown }
    const expect = machine.expect as Expect
    const reply = await client.call(machine.server, request.method, request.path, { json: request.body })
    const head: string[] = []
    if (reply.status !== expect.status) head.push(`status ${reply.status}, expected ${expect.status}: ${reply.text.slice(0, 200)}`)
    const contentType = reply.headers.get('content-type') ?? ''
    if (expect.contentType && !contentType.startsWith(expect.contentType)) head.push(`content-type ${contentType}, expected ${expect.contentType}`)
    const parsed: Line[] = []
    for (const text of reply.text.split('\n').filter((l) => l.trim() !== '')) {
      try {
        parsed.push(JSON.parse(text) as Line)
      } catch {
        head.push(`line is not JSON: ${text.slice(0, 80)}`)
      }
    }
    const error = parsed.find((l) => Object.hasOwn(l, 'error'))
    if (error) head.push(`error line: ${String(error.error)}`)
    return { head, lines: parsed.filter((l) => !Object.hasOwn(l, 'error')) }
  }
  const rowOf = (line: Line) => rows.findIndex((r) => new RegExp(r.line.pattern).test(String(line.status ?? '')))
  return {
    async run(row, _variant, problems) {
      const first = !lines
      lines ??= send()
      const { head, lines: all } = await lines
      if (first) problems.push(...head)
      const index = rows.indexOf(row as PullRow)
      const mine = all.map((line, at) => ({ line, at })).filter(({ line }) => rowOf(line) === index)
      if (mine.length === 0) problems.push(`status "${row.event}" never seen`)
      if (mine.length > 1 && !(row as PullRow).line.repeat) problems.push(`${mine.length} lines, the seed shows one`)
      for (const { line, at } of mine) {
        const later = all.slice(0, at).find((l) => rowOf(l) > index)
        if (later) problems.push(`"${String(line.status)}" after "${String(later.status)}" (out of order)`)
        for (const f of (row as PullRow).line.fields ?? []) if (!Object.hasOwn(line, f)) problems.push(`line "${String(line.status)}" lacks ${f}`)
      }
      if (index === rows.length - 1) {
        const unknown = all.filter((l) => rowOf(l) === -1).map((l) => String(l.status))
        if (unknown.length) problems.push(`unknown status line(s): ${unknown.join(', ')}`)
      }
    },
  }
}
