/** A Containerfile read into stages of instructions (continuation lines joined, comments dropped), for the deploy tests. */
export type Instruction = { keyword: string; args: string }
export type Stage = { from: string; name?: string; instructions: Instruction[] }

export function containerfileStages(text: string): Stage[] {
  const lines = text.replace(/\\\n/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'))
  const stages: Stage[] = []
  for (const line of lines) {
    const [keyword, ...rest] = line.split(/\s+/)
    const args = rest.join(' ')
    if (keyword!.toUpperCase() === 'FROM') {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args)!
      stages.push({ from: m[1]!, name: m[2], instructions: [] })
    } else if (stages.length) stages.at(-1)!.instructions.push({ keyword: keyword!.toUpperCase(), args })
  }
  return stages
}
