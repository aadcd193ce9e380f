/**
 * The named checks of the fuzzer, each applied to every exchange it concerns and counted in the report
 * (`checked`, `failed`). The first fourteen are Schemathesis 4's checks under their names, as partners know
 * them; the last four are the project's own: x402's payment headers, MCP tool results, no server path in an
 * error, and an answer at all.
 */
export const CHECKS = {
  not_a_server_error: 'no 5xx, except a 502 the document lists for the operation (a third party the request named failed)',
  status_code_conformance: 'the status is documented for the operation (or, outside every operation, is the documented fallback)',
  content_type_conformance: 'a body comes with a Content-Type the document lists for that status; a status documented without a body sends none',
  response_headers_conformance: 'the headers the document requires for that status are present and match their schemas',
  response_schema_conformance: 'the body matches the schema of its status and media type',
  negative_data_rejection: 'a request the document refuses (a parameter, media type or body outside its schema) is not answered 2xx',
  positive_data_acceptance: 'a request the document accepts, with credentials the operation accepts, is never refused as invalid (415, 422, or the validation 400)',
  missing_required_header: 'a request without a required header parameter is answered 4xx',
  unsupported_method: 'a method the path does not document is answered 405 with an Allow header naming the documented methods',
  use_after_free: 'what a successful DELETE (or a link marked x-use-after-free) removed is gone: its link answers 404 or 410 (401 for a revoked credential)',
  ensure_resource_availability: 'a resource a successful response names (by an OpenAPI link) exists: the link does not answer 404 or 410',
  ignored_auth: 'an operation that declares security, called without credentials or with garbage ones, is not answered 2xx',
  max_response_time: 'the answer is complete within the maximum response time (--max-response-time)',
  x402_payment_required: 'a PAYMENT-REQUIRED header is base64 of an x402 v2 PaymentRequired, the same as the JSON body when there is one',
  x402_payment_response: 'a PAYMENT-RESPONSE header is base64 of an x402 v2 SettleResponse, successful on a 2xx',
  mcp_tool_result: 'an MCP tools/call result matches the tool: structuredContent valid against its outputSchema, content a list of content blocks',
  no_server_path: 'no error body names a path on the server (repository, temporary or home directories, stack frames)',
  server_answers: 'every request gets an answer, and both servers still answer after the run',
} as const

export type CheckName = keyof typeof CHECKS
export const CHECK_NAMES = Object.keys(CHECKS) as CheckName[]

/** One check applied to one exchange: passed, or failed with what is wrong. */
export type CheckResult = { check: CheckName; problem?: string }

export type CheckCounts = Record<CheckName, { checked: number; failed: number }>

export function emptyCounts(): CheckCounts {
  return Object.fromEntries(CHECK_NAMES.map((name) => [name, { checked: 0, failed: 0 }])) as CheckCounts
}
