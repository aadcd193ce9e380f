import { describe, expect, it } from 'vitest'
import { loadModelServerConfig } from './config.js'

describe('MODELSERVER_TRACING_*', () => {
  it('is off by default; on, exports to its own endpoint, else the standard OTEL_* variables', () => {
    expect(loadModelServerConfig({}).tracing).toEqual({ enabled: false, serviceName: 'pay2store-modelserver', serviceVersion: '0.12.6', otlpTracesUrl: 'http://localhost:4318/v1/traces', sampleRatio: 1 })
    const on = { MODELSERVER_TRACING_ENABLED: '1' }
    expect(loadModelServerConfig({ ...on, MODELSERVER_TRACING_OTLP_ENDPOINT: 'http://collector:4318' }).tracing).toMatchObject({ enabled: true, otlpTracesUrl: 'http://collector:4318/v1/traces' })
    expect(loadModelServerConfig({ ...on, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SERVICE_NAME: 'ms-1', MODELSERVER_TRACING_SAMPLE_RATIO: '0.5' }).tracing).toMatchObject({
      otlpTracesUrl: 'http://c:4318/v1/traces',
      serviceName: 'ms-1',
      sampleRatio: 0.5,
    })
    expect(() => loadModelServerConfig({ ...on, MODELSERVER_TRACING_OTLP_ENDPOINT: 'c:4318' })).toThrow(/MODELSERVER_TRACING_OTLP_ENDPOINT must be an http\(s\) URL/)
    expect(() => loadModelServerConfig({ MODELSERVER_TRACING_SAMPLE_RATIO: '2' })).toThrow(/MODELSERVER_TRACING_SAMPLE_RATIO/)
  })
})
