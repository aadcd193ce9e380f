/**
 * Where traces go over OTLP/HTTP: the program's own variable (`own`, a base URL like the standard
 * `OTEL_EXPORTER_OTLP_ENDPOINT`), else the standard variables as every OpenTelemetry SDK reads them —
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (the whole URL), `OTEL_EXPORTER_OTLP_ENDPOINT` (a base) — else a collector
 * on this machine (`http://localhost:4318`). A base gets the signal's path, `/v1/traces`. `variable` names where
 * the URL came from (for the configuration's error), `valid` says whether it is an http(s) URL.
 */
export function otlpTracesUrl(env: Record<string, string | undefined>, own: string): { url: string; variable: string; valid: boolean } {
  const read = (name: string) => {
    const value = env[name]?.trim()
    return value === undefined || value === '' ? undefined : value
  }
  const base = (value: string) => `${value.replace(/\/+$/, '')}/v1/traces`
  const ownValue = read(own)
  const traces = read('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT')
  const [variable, url] =
    ownValue !== undefined
      ? [own, base(ownValue)]
      : traces !== undefined
        ? ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', traces]
        : ['OTEL_EXPORTER_OTLP_ENDPOINT', base(read('OTEL_EXPORTER_OTLP_ENDPOINT') ?? 'http://localhost:4318')]
  let protocol: string | undefined
  try {
    protocol = new URL(url).protocol
  } catch {
    protocol = undefined
  }
  return { url, variable, valid: protocol === 'http:' || protocol === 'https:' }
}
