import { declareDiscoveryExtension } from '@x402/extensions/bazaar'

export type BodyDiscovery = {
  method: 'POST' | 'PUT' | 'PATCH'
  bodyType: 'json' | 'form-data' | 'text'
  /** An example request body. */
  input: Record<string, unknown>
  /** JSON Schema of the request body (`properties`, `required`). */
  inputSchema: Record<string, unknown>
  /** An example of the paid answer. */
  outputExample: unknown
}

/**
 * `extensions` of a 402 declaring the x402 Bazaar discovery extension (`{bazaar: {info, schema}}`) for a
 * body-carrying route, built by the reference package so discovery services and facilitators that
 * validate `info` against `schema` index the route.
 */
export function bazaarExtensions(route: BodyDiscovery): Record<string, unknown> {
  const { bazaar } = declareDiscoveryExtension({
    bodyType: route.bodyType,
    input: route.input,
    inputSchema: route.inputSchema,
    output: { example: route.outputExample },
  }) as unknown as { bazaar: { info: { input: Record<string, unknown> } } & Record<string, unknown> }
  // The reference resource server fills `method` in from the live request; we know it up front. Its schema
  // already allows it (`enum: [POST, PUT, PATCH]`).
  return { bazaar: { ...bazaar, info: { ...bazaar.info, input: { ...bazaar.info.input, method: route.method } } } }
}
