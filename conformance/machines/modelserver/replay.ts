/**
 * Replays pullProgress.yaml (seed §3.2) against a live server by URL — ours or a real Ollama. The machine is
 * the order of the `status` values inside ONE streamed response, which conformance/runner.ts (one response per
 * row) cannot express; residency.yaml is in the runner's own format. Returns one result per row.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse } from 'yaml'

const here = path.dirname(fileURLToPath(import.meta.url))

type HttpStep = { method: string; path: string; body?: unknown }
export type PullMachine = {
  machine: string
  vars: Record<string, string>
  request: HttpStep
  expect: { status: number; contentType: string }
  rows: Array<{ order: number; status: string; pattern: string; repeat: boolean; fields?: string[] }>
}
export type RowResult = { id: string; ok: boolean; problems: string[] }

export function loadMachine<T>(file: 'pullProgress.yaml'): T {
  return parse(readFileSync(path.join(here, file), 'utf8')) as T
}

/** Replaces `{{name}}` in every string of a JSON value. */
function fill<T>(value: T, vars: Record<string, string>): T {
  return JSON.parse(JSON.stringify(value).replace(/\{\{(\w+)\}\}/g, (_m, k: string) => vars[k] ?? `{{${k}}}`)) as T
}

async function send(base: string, step: HttpStep): Promise<{ status: number; contentType: string; text: string }> {
  const res = await fetch(`${base}${step.path}`, {
    method: step.method,
    headers: step.body === undefined ? {} : { 'content-type': 'application/json' },
    body: step.body === undefined ? undefined : JSON.stringify(step.body),
  })
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', text: await res.text() }
}

export async function replayPull(base: string, machine: PullMachine, vars: Record<string, string> = {}): Promise<RowResult[]> {
  const m = fill(machine, { ...machine.vars, ...vars })
  const res = await send(base, m.request)
  const head: string[] = []
  if (res.status !== m.expect.status) head.push(`status ${res.status}, expected ${m.expect.status}`)
  if (!res.contentType.startsWith(m.expect.contentType)) head.push(`content-type ${res.contentType}, expected ${m.expect.contentType}`)
  const lines = res.text.trimEnd().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>)
  const error = lines.find((l) => 'error' in l)
  if (error) head.push(`error line: ${String(error.error)}`)
  // Each line must match a row at or after the current one; only repeatable rows may match twice.
  const seen = new Map<number, number>()
  let current = 0
  const stray: string[] = []
  for (const line of lines) {
    if ('error' in line) continue
    const status = String(line.status ?? '')
    const index = m.rows.findIndex((r) => new RegExp(r.pattern).test(status))
    if (index === -1) {
      stray.push(`unknown status "${status}"`)
      continue
    }
    if (index < current) stray.push(`"${status}" after row ${current + 1} (out of order)`)
    else if (index === current && seen.get(index) && !m.rows[index]!.repeat) stray.push(`"${status}" repeated`)
    current = Math.max(current, index)
    seen.set(index, (seen.get(index) ?? 0) + 1)
    for (const f of m.rows[index]!.fields ?? []) if (!(f in line)) stray.push(`line "${status}" lacks ${f}`)
  }
  return m.rows.map((row, i) => {
    const problems = [...(i === 0 ? head : []), ...(i === m.rows.length - 1 ? stray : [])]
    if (!seen.get(i)) problems.push(`status "${row.status}" never seen`)
    return { id: `3.2-${row.order}`, ok: problems.length === 0, problems }
  })
}
