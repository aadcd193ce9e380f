/** Ollama's parameter-size label: 1.7B, 135M, 128.58K. */
export function formatParameterSize(count: number): string {
  const units: Array<[number, string]> = [
    [1e12, 'T'],
    [1e9, 'B'],
    [1e6, 'M'],
    [1e3, 'K'],
  ]
  for (const [scale, unit] of units) {
    if (count >= scale) {
      const v = count / scale
      const text = Number.isInteger(v) ? v.toFixed(0) : v.toFixed(2).replace(/\.?0+$/, '')
      return `${text}${unit}`
    }
  }
  return String(count)
}
