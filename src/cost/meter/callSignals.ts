import type { CallSignals } from './MeteredModelServer.js'

/**
 * The signals a call's model-server requests run under. Without anything of the meter's own to stop (no head
 * start before the quota, no deadline, nothing read to its count) they are the client's, as they come: no
 * allocation on the path of the first token. Otherwise `controller` is the meter's: aborted when the quota
 * refuses a call that started early, or at the payment's deadline. A call paid per token (`drain`) lets its
 * streams outlive the client — one it left is read to the model server's count — while its whole answers
 * still end with the client (nothing of them was served).
 */
export function callSignals(client: AbortSignal | undefined, o: { own: boolean; drain: boolean }): { controller: AbortController | undefined; signals: CallSignals } {
  if (!o.own && !o.drain) return { controller: undefined, signals: { whole: client, stream: client } }
  const controller = new AbortController()
  if (o.drain) {
    const whole = client ? AbortSignal.any([controller.signal, client]) : controller.signal
    return { controller, signals: { whole, stream: controller.signal } }
  }
  if (client?.aborted) controller.abort(client.reason)
  else client?.addEventListener('abort', () => controller.abort(client.reason), { once: true })
  return { controller, signals: { whole: controller.signal, stream: controller.signal } }
}
