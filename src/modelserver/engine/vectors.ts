/** L2-normalises (as Ollama does for every embedding); a zero vector stays zero. */
export function normalize(v: ArrayLike<number>): number[] {
  let sum = 0
  for (let i = 0; i < v.length; i++) sum += v[i]! * v[i]!
  const norm = Math.sqrt(sum)
  const out = new Array<number>(v.length)
  for (let i = 0; i < v.length; i++) out[i] = norm === 0 ? 0 : v[i]! / norm
  return out
}
