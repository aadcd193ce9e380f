/** Bytes of an error body read to find its OCI error codes; the rest is discarded unread. */
const MAX_ERROR_BODY = 64 * 1024
const ociCode = /^[A-Z][A-Z_]{0,39}$/

/**
 * A registry's non-2xx answer in a few words: its status and, when the body is the distribution specification's
 * `{errors: [{code}]}`, the codes (e.g. `UNAUTHORIZED`). The body itself is never repeated: whatever a registry —
 * or whatever a registry name was made to point at — wrote there is not ours to pass on to the caller.
 */
export async function summariseRegistryAnswer(res: Response): Promise<string> {
  const codes = await readCodes(res).catch(() => [])
  return codes.length > 0 ? `registry answered ${res.status} (${codes.join(', ')})` : `registry answered ${res.status}`
}

async function readCodes(res: Response): Promise<string[]> {
  if (!res.body) return []
  const reader = res.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  try {
    while (size <= MAX_ERROR_BODY) {
      const { done, value } = await reader.read()
      if (done) break
      chunks.push(value)
      size += value.length
    }
  } finally {
    await reader.cancel().catch(() => {})
  }
  if (size > MAX_ERROR_BODY) return []
  const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { errors?: Array<{ code?: unknown }> }
  if (!Array.isArray(parsed?.errors)) return []
  const codes = parsed.errors.map((e) => e?.code).filter((c): c is string => typeof c === 'string' && ociCode.test(c))
  return [...new Set(codes)].slice(0, 3)
}
