/**
 * Replays the model-server machines (residency.yaml, pullProgress.yaml) against a live server by URL — ours or
 * a real Ollama. Each row is a step: put the model in the row's `from` state, send the event, check the
 * response, then observe the state. Returns one result per row (the caller asserts or prints them).
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse } from 'yaml'

const here = path.dirname(fileURLToPath(import.meta.url))

type HttpStep = { method: string; path: string; body?: unknown }
type ResidencyRow = {
  id: string
  from: 'loaded' | 'unloaded'
  event: string
  condition: string
  request: HttpStep
  expect: { status: number; body?: Record<string, unknown> }
  to: 'loaded' | 'unloaded'
  wait_ms?: number
  check?: { expires_in_s?: [number, number]; forever?: boolean }
}
export type ResidencyMachine = {
  machine: string
  vars: Record<string, string>
  observe: { request: HttpStep; listField: string; nameField: string }
  setup: Record<'loaded' | 'unloaded', HttpStep>
  rows: ResidencyRow[]
}
export type PullMachine = {
  machine: string
  vars: Record<string, string>
  request: HttpStep
  expect: { status: number; contentType: string }
  rows: Array<{ order: number; status: string; pattern: string; repeat: boolean; fields?: string[] }>
}
export type RowResult = { id: string; ok: boolean; problems: string[] }

export function loadMachine<T>(file: 'residency.yaml' | 'pullProgress.yaml'): T {
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

type PsEntry = { expires_at?: string }

async function observe(base: string, m: ResidencyMachine, model: string): Promise<{ state: 'loaded' | 'unloaded'; entry?: PsEntry }> {
  const res = await send(base, m.observe.request)
  const list = (JSON.parse(res.text) as Record<string, Array<Record<string, unknown>>>)[m.observe.listField] ?? []
  const entry = list.find((e) => e[m.observe.nameField] === model)
  return entry ? { state: 'loaded', entry: entry as PsEntry } : { state: 'unloaded' }
}

export async function replayResidency(base: string, machine: ResidencyMachine, vars: Record<string, string> = {}): Promise<RowResult[]> {
  const m = fill(machine, { ...machine.vars, ...vars })
  const model = { ...machine.vars, ...vars }.model!
  const results: RowResult[] = []
  for (const row of m.rows) {
    const problems: string[] = []
    await send(base, m.setup[row.from])
    const before = await observe(base, m, model)
    if (before.state !== row.from) problems.push(`setup: expected ${row.from}, observed ${before.state}`)
    const res = await send(base, row.request)
    if (res.status !== row.expect.status) problems.push(`status ${res.status}, expected ${row.expect.status}: ${res.text.slice(0, 200)}`)
    else if (row.expect.body) {
      const body = JSON.parse(res.text) as Record<string, unknown>
      for (const [k, v] of Object.entries(row.expect.body)) if (body[k] !== v) problems.push(`body.${k} = ${JSON.stringify(body[k])}, expected ${JSON.stringify(v)}`)
    }
    if (row.wait_ms) await new Promise((r) => setTimeout(r, row.wait_ms))
    const after = await observe(base, m, model)
    if (after.state !== row.to) problems.push(`observed ${after.state}, expected ${row.to}`)
    if (after.entry && row.check) {
      const expiresIn = (new Date(after.entry.expires_at ?? 0).getTime() - Date.now()) / 1000
      const range = row.check.expires_in_s
      if (range && !(expiresIn >= range[0] && expiresIn <= range[1])) problems.push(`expires in ${expiresIn.toFixed(0)} s, expected ${range[0]}–${range[1]}`)
      if (row.check.forever && new Date(after.entry.expires_at ?? 0).getUTCFullYear() < 2200) problems.push(`expires_at ${after.entry.expires_at} is not "forever"`)
    }
    results.push({ id: row.id, ok: problems.length === 0, problems })
  }
  return results
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
