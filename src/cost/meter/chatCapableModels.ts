import { ModelServerClient } from '../../modelserverClient/ModelServerClient.js'
import { canonicalModelName, type ModelServerPool } from '../../modelserverClient/ModelServerPool.js'

/** What `chatCapableModels` needs of the pool (so a test can hand it one server's answers). */
export type ModelShowSource = Pick<ModelServerPool, 'listModels' | 'open'>

/**
 * The installed models that can chat, by canonical name (`name:tag`): those whose `POST /api/show` lists the
 * `completion` capability (Ollama's rule; an embedding-only model lists just `embedding` and answers `/api/chat`
 * with "does not support chat"). A model whose details cannot be read is left out. Throws when the model list
 * itself cannot be read (the caller then cannot tell, and says so).
 */
export async function chatCapableModels(pool: ModelShowSource, signal?: AbortSignal): Promise<string[]> {
  const models = await pool.listModels(signal)
  const shown = await Promise.all(
    models.map(async (m) => {
      try {
        const upstream = await pool.open('POST /api/show', { method: 'POST', path: '/api/show', body: { model: m.name } }, signal)
        const text = await ModelServerClient.text(upstream)
        if (upstream.status !== 200) return undefined
        const capabilities = (JSON.parse(text) as { capabilities?: unknown }).capabilities
        return Array.isArray(capabilities) && capabilities.includes('completion') ? canonicalModelName(m.name) : undefined
      } catch {
        return undefined
      }
    }),
  )
  return shown.filter((name): name is string => name !== undefined).sort()
}
