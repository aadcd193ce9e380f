/**
 * The catalogue events the gateway emits are the ones asyncapi/events.yaml documents, no more and no fewer: a kind
 * emitted but undocumented is an event no consumer was told of; one documented but never emitted is a promise (the
 * Insight page's filters, a partner's subscriber) nothing keeps. Read off the sources: every event kind written in
 * a file that emits catalogue events (`.emit({`).
 */
import { readFileSync } from 'node:fs'
import { globSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { documentedEventKinds } from '../support/catalogueEventSchemas.js'

/** An event kind as the catalogue names them: a known family, then dotted lower-case words. */
const KIND = /'((?:auth|admin|storage|llm|feedback)\.[a-z_]+(?:\.[a-z_]+)*)'/g

function emittedKinds(): Map<string, string[]> {
  const kinds = new Map<string, string[]>()
  for (const file of globSync('src/**/*.ts').filter((f) => !f.endsWith('.test.ts'))) {
    const text = readFileSync(file, 'utf8')
    if (!text.includes('.emit({')) continue
    for (const [, kind] of text.matchAll(KIND)) kinds.set(kind!, [...(kinds.get(kind!) ?? []), file])
  }
  return kinds
}

describe('catalogue event kinds', () => {
  it('every kind the sources emit is documented in asyncapi/events.yaml, and every documented kind is emitted', () => {
    const emitted = emittedKinds()
    expect(emitted.size).toBeGreaterThan(5)
    expect([...emitted.keys()].filter((k) => !documentedEventKinds.includes(k)).map((k) => `${k} (${emitted.get(k)!.join(', ')})`)).toEqual([])
    expect(documentedEventKinds.filter((k) => !emitted.has(k))).toEqual([])
  })
})
