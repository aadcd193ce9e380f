import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { operationIds } from '../generated/gateway/operationIds.js'
import { findRepoRoot } from '../src/config/findRepoRoot.js'
import { renderOperationTable, replaceBetweenMarkers, syncDocLists } from './docLists.js'

describe('lists in the docs written from the documents', () => {
  it("docs/design.md's gateway operation table is what openapi/gateway.yaml gives (npm run generate writes it)", () => {
    expect(syncDocLists(findRepoRoot(), 'check')).toEqual([])
  })

  it('lists every operationId of the document with its route and security', () => {
    const table = renderOperationTable({
      security: [{ sessionToken: [] }],
      paths: {
        '/a': { get: { operationId: 'getA', summary: 'A | pipe', security: [] } },
        '/b': { post: { operationId: 'postB', security: [{ sessionToken: [] }, { overlordBearer: [] }] }, delete: { operationId: 'deleteB' } },
      },
    })
    expect(table.split('\n').slice(2)).toEqual([
      '| `getA` | `GET /a` | public | A \\| pipe |',
      '| `postB` | `POST /b` | sessionToken or overlordBearer |  |',
      '| `deleteB` | `DELETE /b` | sessionToken |  |',
    ])
  })

  it('the table in docs/design.md names each generated operationId once', () => {
    const design = readFileSync(join(findRepoRoot(), 'docs', 'design.md'), 'utf8')
    const listed = [...design.matchAll(/^\| `([A-Za-z0-9]+)` \|/gm)].map((m) => m[1])
    expect([...listed].sort()).toEqual([...operationIds].sort())
  })

  it('refuses a doc whose markers are missing instead of appending the list somewhere', () => {
    expect(() => replaceBetweenMarkers('# no markers here', 'gateway-operations', 'x')).toThrow(/markers of gateway-operations not found/)
    const marked = 'a\n<!-- generated:l (scripts/docLists.ts; do not edit by hand) -->\nold\n<!-- /generated:l -->\nb'
    expect(replaceBetweenMarkers(marked, 'l', 'new')).toBe('a\n<!-- generated:l (scripts/docLists.ts; do not edit by hand) -->\nnew\n<!-- /generated:l -->\nb')
  })
})
