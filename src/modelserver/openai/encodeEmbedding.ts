/** A vector as OpenAI's `encoding_format: base64`: its little-endian float32 values, base64. */
export function encodeEmbeddingBase64(vector: readonly number[]): string {
  const buffer = Buffer.alloc(vector.length * 4)
  vector.forEach((v, i) => buffer.writeFloatLE(v, i * 4))
  return buffer.toString('base64')
}
