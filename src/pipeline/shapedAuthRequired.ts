/** The gate's JSON 401 (seed 000 §4.1 rule 5). */
export type AuthRequiredBody = { code: 'auth_required'; from: string }

/** How the routes of another API family shape their errors (the `x-error-shape` of their documented 401). */
export type ErrorShape = 'openai' | 'anthropic'

/**
 * What a client of an OpenAI- or Anthropic-compatible route is told when it sent no valid credential: the same
 * gate answer, in the shape its SDK reads (`error.message` is what the SDK shows), saying how to get a token.
 */
export function shapedAuthRequired(shape: ErrorShape, base: AuthRequiredBody, credentialSent: boolean): Record<string, unknown> {
  const header = shape === 'anthropic' ? 'x-api-key: <token> (or Authorization: Bearer <token>)' : 'Authorization: Bearer <token>'
  const problem = credentialSent ? 'This API key or session token is not valid (unknown, revoked or expired).' : 'No API key.'
  const message = `${problem} Send ${header} with an API key (sk-p2s-…; signed in, create one with POST /llm/keys) or the session token (st_…) of a wallet sign-in: at /login in a browser, or npx pay2store login. The API documents: /docs.html.`
  if (shape === 'anthropic') return { type: 'error', ...base, error: { type: 'authentication_error', message } }
  return { ...base, error: { message, type: 'invalid_request_error', param: null, code: credentialSent ? 'invalid_api_key' : 'missing_api_key' } }
}

/** The error shape an operation declares for its 401, if not the gate's own. */
export function errorShapeOf(definition: Record<string, unknown> | undefined): ErrorShape | undefined {
  const responses = definition?.responses as Record<string, Record<string, unknown> | undefined> | undefined
  const shape = responses?.['401']?.['x-error-shape']
  return shape === 'openai' || shape === 'anthropic' ? shape : undefined
}
