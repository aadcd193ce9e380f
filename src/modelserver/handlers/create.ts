import { badRequest } from '../errors.js'
import { requestedModel } from './requestedModel.js'
import type { NullsDropped } from '../http/nullAsAbsent.js'
import type { ModelServerContext } from '../ModelServerContext.js'
import { NDJSON } from '../http/NdjsonChannel.js'
import { composeModel } from '../store/composeModel.js'
import { parseModelName } from '../store/ModelName.js'
import { promptTemplateOf } from '../template/promptTemplate.js'
import type { HttpResult, RequestContext } from '../../shared/http/index.js'
import type { CreateRequest } from '../../../generated/modelserver/types.gen.js'

/**
 * `/api/create`: from an existing model (`from`) and/or GGUF blobs (`files`), with system, template,
 * parameters, messages and license layers. All checks run before the first byte is sent, so mistakes get
 * their 4xx; the progress lines are then replayed (or `{status: success}` when not streaming).
 */
export async function createModel(ctx: ModelServerContext, req: RequestContext): Promise<HttpResult> {
  const body = req.body as NullsDropped<CreateRequest>
  const name = requestedModel(body)
  const target = parseModelName(name)
  if (body.quantize) {
    throw badRequest(`quantization is not supported by this server (requested "${body.quantize}"); upload an already quantized GGUF`)
  }
  if (body.adapters && Object.keys(body.adapters).length > 0) throw badRequest('adapters are not supported by this server')
  // A template this server cannot render is refused now, not at the first generation.
  if (body.template) promptTemplateOf(body.template)
  const files = Object.entries(body.files ?? {})
  if (!body.from && files.length === 0) throw badRequest("neither 'from' or 'files' was specified")
  if (files.length > 1) throw badRequest('only one model file (a single GGUF) is supported')

  const status = await composeModel(ctx.store, (path) => ctx.engine.inspect(path), {
    target,
    from: body.from,
    files,
    template: body.template,
    system: body.system,
    license: body.license,
    parameters: body.parameters,
    // as Ollama, a message without content (absent or null) is an empty one
    messages: body.messages?.map((m) => ({ role: m.role, content: m.content ?? '' })),
  })
  if (body.stream === false) return { status: 200, body: { status: 'success' } }
  return { status: 200, contentType: NDJSON, body: `${status.map((s) => JSON.stringify(s)).join('\n')}\n` }
}
