import type { Capability, ModelInfo } from './engine/Engine.js'
import type { ModelRecord } from './store/ModelStore.js'

/**
 * What a model can do as installed: the model file's capabilities, except that a template layer (from
 * `/api/create` or a pulled model) replaces the file's chat template, and this server renders such a template as
 * plain text — no tool definitions or calls, no thinking section — so `tools` and `thinking` do not hold for it.
 * `show` reports this list and requests are checked against it, so the two never disagree.
 */
export function capabilitiesOf(record: ModelRecord, info: ModelInfo): Capability[] {
  if (!record.template) return info.capabilities
  return info.capabilities.filter((c) => c !== 'tools' && c !== 'thinking')
}
