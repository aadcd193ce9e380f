/**
 * FuzzRun.check judges an exchange by the operation the server was actually asked for: the URL parser folds
 * `..` before the request leaves, so a drawn path of one operation may reach another (or none).
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { documentRouter } from '../DocumentClient.js'
import { documentedLinks } from './chains.js'
import { Credentials } from './Credentials.js'
import { FuzzRun } from './FuzzRun.js'
import { loadOperations, type Operation } from './operations.js'
import type { FuzzRequest } from './requestArbitrary.js'

let operations: Operation[]
beforeAll(async () => {
  operations = await loadOperations('gateway')
}, 60_000)

function runOver(): FuzzRun {
  return new FuzzRun({
    urls: { gateway: 'http://127.0.0.1:9' },
    credentials: new Credentials(undefined, undefined, 1),
    operations,
    links: documentedLinks(operations),
    mcpTools: new Map(),
    requestTimeoutMs: 1000,
    maxResponseMs: 30_000,
    cut: new AbortController().signal,
  })
}

const html = (status: number, sentPath: string) => ({ status, headers: new Headers({ 'content-type': 'text/html; charset=utf-8' }), text: '<!doctype html><title>pay2store</title>', ms: 1, sentPath, retried: false })

describe('FuzzRun.check: the operation a folded path reached', () => {
  it('GET /agents/.. (getAgent, garbage credentials) reaches the public GET /: its 200 is no ignored_auth of getAgent', () => {
    const run = runOver()
    const getAgent = operations.find((o) => o.id === 'getAgent')!
    const request: FuzzRequest = { operation: 'getAgent', mutation: 'hostile-path', method: 'GET', path: '/agents/..', headers: {} }
    run.check({ op: getAgent, tier: 'garbage', request, answer: html(200, '/') }, 'drawn', 0, [])
    expect(run.violations.filter((v) => v.check === 'ignored_auth')).toEqual([])
  })

  it('a folded path that reaches another operation needing credentials is still held to that operation’s security', () => {
    const run = runOver()
    const getAgent = operations.find((o) => o.id === 'getAgent')!
    const listAgents = operations.find((o) => o.method === 'GET' && o.path === '/agents')!
    expect((documentRouter('gateway').matchOperation('GET', '/agents/') as { operationId?: string }).operationId).toBe(listAgents.id)
    expect(listAgents.security.every((alternative) => alternative.length > 0)).toBe(true)
    const request: FuzzRequest = { operation: 'getAgent', mutation: 'hostile-path', method: 'GET', path: '/agents/x/..', headers: {} }
    const answer = { status: 200, headers: new Headers({ 'content-type': 'application/json' }), text: '{}', ms: 1, sentPath: '/agents/', retried: false }
    run.check({ op: getAgent, tier: 'none', request, answer }, 'drawn', 0, [])
    expect(run.violations.filter((v) => v.check === 'ignored_auth').map((v) => v.problem)).toEqual([expect.stringMatching(/answered 200 without credentials/)])
  })

  it('the request the operation was drawn for keeps every input check', () => {
    const run = runOver()
    const getAgent = operations.find((o) => o.id === 'getAgent')!
    const request: FuzzRequest = { operation: 'getAgent', mutation: 'valid', method: 'GET', path: '/agents/agent-1', headers: {} }
    run.check({ op: getAgent, tier: 'garbage', request, answer: { ...html(200, '/agents/agent-1'), headers: new Headers({ 'content-type': 'application/json' }), text: '{}' } }, 'drawn', 0, [])
    expect(run.violations.filter((v) => v.check === 'ignored_auth')).toHaveLength(1)
  })
})
