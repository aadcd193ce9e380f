#!/usr/bin/env node
// The container's health check (Containerfile HEALTHCHECK, compose.yaml): exits 0 when HEALTH_URL (default the
// gateway's /health on SERVICE_PORT) answers 2xx within HEALTH_TIMEOUT_MS (default 2500, under the
// image's 3 s), else 1. Slim Node images have no curl or wget.
// HEALTH_BEARER, when set, is sent as `Authorization: Bearer` (the model server with API keys wants one on every route).
const url = process.env.HEALTH_URL ?? `http://127.0.0.1:${process.env.SERVICE_PORT || 8000}/health`
const headers = process.env.HEALTH_BEARER ? { authorization: `Bearer ${process.env.HEALTH_BEARER}` } : {}
try {
  const res = await fetch(url, { headers, signal: AbortSignal.timeout(Number(process.env.HEALTH_TIMEOUT_MS) || 2_500) })
  if (!res.ok) {
    console.error(`unhealthy: ${url} answered ${res.status}`)
    process.exit(1)
  }
} catch (e) {
  console.error(`unhealthy: ${url}: ${e instanceof Error ? e.message : String(e)}`)
  process.exit(1)
}
