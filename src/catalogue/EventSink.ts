/**
 * Where domain modules send catalogue events (seed 000 §2.6, §6.1). The catalogue module implements it
 * (append-only JSON-lines log + database index); tests can pass a collecting sink.
 * Payloads must never carry key material.
 */
export type CatalogueEventInput = {
  kind: string
  payload: Record<string, unknown>
  /** Defaults to `service.gateway`. */
  actor?: string
  /** `info` unless stated; release-key uses `critical`. */
  severity?: 'info' | 'warning' | 'critical'
}

export type CatalogueEvent = {
  event_id: string
  kind: string
  actor: string
  at: number
  severity: 'info' | 'warning' | 'critical'
  payload: Record<string, unknown>
  source_log: string
}

export interface EventSink {
  emit(event: CatalogueEventInput): Promise<CatalogueEvent>
}
