import { describe, expect, it } from 'vitest'
import { GatewayMetrics } from './GatewayMetrics.js'

describe('GatewayMetrics', () => {
  it('counts responses by operation and status, and the gate outcomes, in the Prometheus text', async () => {
    const metrics = new GatewayMetrics()
    const info = { operationId: 'listAgents', method: 'GET', path: '/agents', status: 200, durationMs: 3, requestBytes: 0, responseBytes: 10 }
    metrics.recordResponse(info)
    metrics.recordResponse(info)
    metrics.recordResponse({ ...info, operationId: undefined, status: 404 })
    metrics.gateRedirect()
    metrics.gateAuthRequired()
    const text = await metrics.text()
    expect(text).toContain('http_requests_total{operation="listAgents",method="GET",status="200"} 2')
    expect(text).toContain('http_requests_total{operation="unrouted",method="GET",status="404"} 1')
    expect(text).toContain('http_request_duration_seconds_count{operation="listAgents"} 2')
    expect(text).toContain('gate_redirects_total 1')
    expect(text).toContain('gate_auth_required_total 1')
  })
})
