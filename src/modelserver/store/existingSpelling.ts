import type { ModelName } from './ModelName.js'

const PARTS = ['host', 'namespace', 'model', 'tag'] as const

/**
 * The spelling a new model name is written under, as Ollama's getExistingName: each part (host, namespace, model,
 * tag, each on its own) takes the spelling that part already has in an installed model, so `tiny:v2` next to an
 * installed `Tiny:latest` is `Tiny:v2` and `foo:LATEST` is `foo:latest` — one directory per model whatever the
 * disk's case rules. Where installed models spell a part two ways Ollama's pick is arbitrary; here the first
 * of `installed` (the store lists the most recently modified first) wins.
 */
export function existingSpelling(name: ModelName, installed: readonly ModelName[]): ModelName {
  const out = { ...name }
  for (const part of PARTS) {
    const folded = name[part].toLowerCase()
    const found = installed.find((e) => e[part].toLowerCase() === folded)
    if (found) out[part] = found[part]
  }
  return out
}
