import { describe, expect, it } from 'vitest'
import { ArrivalGate } from './ArrivalGate.js'
import { createIpHasher } from './createIpHasher.js'
import { isHtmlRequest } from './isHtmlRequest.js'
import { fileURLToPath } from 'node:url'
import { loadOpenApiDocument } from '../shared/http/index.js'
import { PublicSet, publicSetFromDocument, requiresSession } from './PublicSet.js'
import { FROM_FALLBACK, sanitizeFrom } from './sanitizeFrom.js'
import { hostileFromValues } from '../../tests/support/hostileFromValues.js'
import type { CatalogueEvent, CatalogueEventInput, EventSink } from '../catalogue/EventSink.js'


describe('sanitizeFrom', () => {
  it.each(hostileFromValues)('rejects %j', (value) => {
    expect(sanitizeFrom(value)).toBe(FROM_FALLBACK)
  })

  it(`tries at least 20 hostile values (${hostileFromValues.length})`, () => {
    expect(hostileFromValues.length).toBeGreaterThanOrEqual(20)
  })

  it.each([
    ['/journal', '/journal'],
    ['/insight/catalogue/recent?kind=auth.gate.redirect&h=true', '/insight/catalogue/recent?kind=auth.gate.redirect&h=true'],
    ['/coreterm/', '/coreterm/'],
    ['/cabinet/ACME', '/cabinet/ACME'],
    ['/vault/sign/company:ACME:cabinet:ceo', '/vault/sign/company:ACME:cabinet:ceo'],
    ['/a%20b', '/a%20b'],
  ])('keeps the same-origin path %j', (value, expected) => {
    expect(sanitizeFrom(value)).toBe(expected)
  })

  it('falls back to / (the issue\'s rule), not to any other page', () => {
    expect(FROM_FALLBACK).toBe('/')
    expect(sanitizeFrom('//evil.example/x')).toBe('/')
    expect(sanitizeFrom('/login?from=%2Fjournal')).toBe('/')
  })

  it('falls back for missing and non-string values', () => {
    expect(sanitizeFrom(undefined)).toBe(FROM_FALLBACK)
    expect(sanitizeFrom('')).toBe(FROM_FALLBACK)
    expect(sanitizeFrom(['/journal'])).toBe(FROM_FALLBACK)
  })
})

describe('isHtmlRequest', () => {
  it.each([
    [{ accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' }, true],
    [{ accept: 'application/xhtml+xml' }, true],
    [{ 'sec-fetch-mode': 'navigate', accept: '*/*' }, true],
    [{ accept: 'application/json, text/html' }, false],
    [{ accept: 'application/problem+json, text/html' }, false],
    [{ accept: '*/*' }, false],
    [{}, false],
    [{ 'sec-fetch-mode': 'cors', accept: '*/*' }, false],
  ])('%j → %s', (headers, expected) => {
    expect(isHtmlRequest(headers)).toBe(expected)
  })
})

describe('public set', () => {
  const set = new PublicSet({
    exact: ['/favicon.ico'],
    prefixes: ['/doc/', '/autocore/', '/admin/shadow/', '/static/'],
    preRolloutExact: ['/journal', '/health'],
    preRolloutPrefixes: ['/insight/'],
  })
  it('matches exact paths and prefixes (a prefix covers its bare form)', () => {
    expect(set.isListedPublic('/favicon.ico')).toBe(true)
    expect(set.isListedPublic('/doc/')).toBe(true)
    expect(set.isListedPublic('/doc')).toBe(true)
    expect(set.isListedPublic('/doc/openapi/gateway.yaml')).toBe(true)
    expect(set.isListedPublic('/autocore')).toBe(true)
    expect(set.isListedPublic('/admin/shadow/challenge')).toBe(true)
    expect(set.isListedPublic('/documents')).toBe(false)
    expect(set.isListedPublic('/journal')).toBe(false)
    expect(set.isListedPublic('/admin/cabinet/ACME/provision')).toBe(false)
  })
  it('derives session-required operations from their security requirements', () => {
    expect(requiresSession([{ sessionToken: [] }])).toBe(true)
    // the browser cookie is the same session (GET/HEAD alternative): still gated
    expect(requiresSession([{ sessionToken: [] }, { sessionCookie: [] }])).toBe(true)
    expect(requiresSession([{ sessionCookie: [] }])).toBe(true)
    expect(requiresSession([{ sessionToken: [] }, {}])).toBe(false)
    expect(requiresSession([])).toBe(false)
    expect(requiresSession([{ overlordBearer: [] }])).toBe(false)
    expect(requiresSession([{}, { x402Payment: [] }])).toBe(false)
    // Tier matrix: the overlord bearer as an alternative keeps an operation gated; /llm/v1's bearer is a session.
    expect(requiresSession([{ sessionToken: [] }, { overlordBearer: [] }])).toBe(true)
    expect(requiresSession([{ sessionToken: [] }, { llmBearer: [] }])).toBe(true)
    expect(requiresSession([{ overlordBearer: [] }, {}])).toBe(false)
  })
  it('applies the pre-rollout list only when the hard gate is off', () => {
    let hard = true
    const events: CatalogueEventInput[] = []
    const sink: EventSink = { emit: async (e) => (events.push(e), e as unknown as CatalogueEvent) }
    const gate = new ArrivalGate({ publicSet: set, hardGateEnabled: () => hard, events: sink, hashIp: createIpHasher('salt') })
    const session = [{ sessionToken: [] }]
    expect(gate.isOpen('/journal', session)).toBe(false)
    hard = false
    expect(gate.isOpen('/journal', session)).toBe(true)
    expect(gate.isOpen('/insight/', session)).toBe(true)
    expect(gate.isOpen('/insight', session)).toBe(true)
    expect(gate.isOpen('/llm/chat', session)).toBe(false)
  })
})

describe('public set of the gateway document', () => {
  const document = loadOpenApiDocument(fileURLToPath(new URL('../../openapi/gateway.yaml', import.meta.url)))
  const securityOf = (path: string) => {
    const operation = (document.paths as Record<string, { get: { security: Array<Record<string, string[]>> } }>)[path]!.get
    return operation.security
  }
  const gate = new ArrivalGate({
    publicSet: new PublicSet(publicSetFromDocument(document)),
    hardGateEnabled: () => true,
    events: { emit: async (e) => e as unknown as CatalogueEvent },
    hashIp: createIpHasher('salt'),
  })

  it('GET /health is a public liveness probe (security: []); /health/detailed stays gated', () => {
    expect(securityOf('/health')).toEqual([])
    expect(gate.isOpen('/health', securityOf('/health'))).toBe(true)
    expect(gate.isOpen('/health/detailed', securityOf('/health/detailed'))).toBe(false)
  })

  it('session-gated GET pages accept the cookie (and the overlord bearer) as alternatives and stay gated', () => {
    expect(securityOf('/journal')).toEqual([{ sessionToken: [] }, { sessionCookie: [] }, { overlordBearer: [] }])
    expect(gate.isOpen('/journal', securityOf('/journal'))).toBe(false)
  })
})

describe('ip hash', () => {
  it('is a keyed SHA-256: stable per salt, different across salts', () => {
    const a = createIpHasher('one')
    expect(a('203.0.113.7')).toMatch(/^sha256:[0-9a-f]{64}$/)
    expect(a('203.0.113.7')).toBe(a('203.0.113.7'))
    expect(createIpHasher('two')('203.0.113.7')).not.toBe(a('203.0.113.7'))
  })
})
