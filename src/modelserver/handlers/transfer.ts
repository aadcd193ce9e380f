import { modelNotFound, publicMessage } from '../errors.js'
import { requestedModel } from './requestedModel.js'
import type { NullsDropped } from '../http/nullAsAbsent.js'
import type { ModelServerContext } from '../ModelServerContext.js'
import { NDJSON, NdjsonChannel } from '../http/NdjsonChannel.js'
import type { Progress, RegistryClient } from '../registry/RegistryClient.js'
import { parseModelName } from '../store/ModelName.js'
import type { HttpResult, RequestContext } from '../../shared/http/index.js'
import type { PullRequest, PushRequest } from '../../../generated/modelserver/types.gen.js'

type Transfer = 'pull' | 'push'

/**
 * `/api/pull` and `/api/push`: progress lines as NDJSON (`stream` true, default) with a final `{error}` line on
 * failure, or one `{status: success}` object (errors then carry their status).
 */
export async function transfer(
  kind: Transfer,
  ctx: ModelServerContext,
  registry: RegistryClient,
  req: RequestContext,
): Promise<HttpResult> {
  const body = req.body as NullsDropped<PullRequest | PushRequest>
  const raw = requestedModel(body)
  const name = parseModelName(raw)
  const insecure = body.insecure === true
  // A registry outside MODELSERVER_REGISTRIES is a client mistake: 400 before anything is sent or streamed.
  registry.assertAllowed(name)
  const run = (onProgress: (p: Progress) => void) =>
    kind === 'pull'
      ? registry.pull(name, { insecure, signal: req.signal, onProgress })
      : registry.push(name, { insecure, signal: req.signal, onProgress })
  if (body.stream === false) {
    await run(() => {})
    return { status: 200, body: { status: 'success' } }
  }
  // A model to push that is not installed is a client mistake: 404 before streaming.
  if (kind === 'push' && !(await ctx.store.get(name))) throw modelNotFound(raw)
  const channel = new NdjsonChannel()
  run((p) => channel.push(p))
    .then(() => channel.end())
    .catch((error: unknown) => channel.fail(publicMessage(error)))
  return { status: 200, contentType: NDJSON, stream: channel }
}
