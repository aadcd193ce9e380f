/**
 * Express and openapi-backend are used through their public API. The two places where the gateway steps around
 * Express for speed are modules of their own, each with its reason and its measurement beside it
 * (createPipelineApp: Express's router skipped for a single mounted pipeline; createExpressServer: the request and
 * response built with the app's prototypes); nothing else may reach into either library's internals, or an
 * upgrade could change behaviour nobody asked about.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = join(import.meta.dirname, '..', '..')

/** Reaching into Express's or openapi-backend's undocumented members, or re-parenting a request or response. */
const INTERNALS = /\._router\b|\.lazyrouter\b|\bapp\.handle\(|\breq\.next\s*=|\.setPrototypeOf\((req|res)\b|\.prototype\s*=\s*app\.|\bopenapi-backend\/(?!package)[\w/]+|\.(?:definition|validator)\.ajv\b/

/** The owned bypasses: why each exists is written in the module, its figures in docs/performance.md. */
const OWNED = new Set(['src/shared/http/createPipelineApp.ts', 'src/shared/http/createExpressServer.ts'])

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sourceFiles(path)
    return /\.ts$/.test(name) && !/\.test\.ts$/.test(name) ? [path] : []
  })
}

export function internalsIn(file: string, text: string): string[] {
  return text.split('\n').flatMap((line, i) => (INTERNALS.test(line) && !line.trim().startsWith('*') && !line.trim().startsWith('//') ? [`${file}:${i + 1}: ${line.trim()}`] : []))
}

describe('Express and openapi-backend through their public API', () => {
  it('no module outside the two owned bypasses touches their internals', () => {
    const found = sourceFiles(join(ROOT, 'src'))
      .map((path) => relative(ROOT, path))
      .filter((file) => !OWNED.has(file))
      .flatMap((file) => internalsIn(file, readFileSync(join(ROOT, file), 'utf8')))
    expect(found).toEqual([])
  })

  it('each owned bypass still needs its exception, and says why', () => {
    for (const file of OWNED) {
      const text = readFileSync(join(ROOT, file), 'utf8')
      expect(internalsIn(file, text).length, file).toBeGreaterThan(0)
      expect(text, file).toMatch(/\bWhy\b/)
    }
  })

  it('finds planted reaches into the internals', () => {
    expect(internalsIn('x.ts', 'const stack = app._router.stack')).toHaveLength(1)
    expect(internalsIn('x.ts', 'app.handle(req, res, done)')).toHaveLength(1)
    expect(internalsIn('x.ts', 'req.next = done')).toHaveLength(1)
    expect(internalsIn('x.ts', 'Object.setPrototypeOf(req, app.request)')).toHaveLength(1)
    expect(internalsIn('x.ts', "import { x } from 'openapi-backend/validation'")).toHaveLength(1)
    expect(internalsIn('x.ts', 'const answer = app(req, res)')).toHaveLength(0)
  })
})
