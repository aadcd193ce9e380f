/**
 * The meter's API: what the gateway's rooms use to reach the model server (only this folder imports the
 * model-server client; `.dependency-cruiser.cjs` rule `only-the-meter-reaches-the-model-server`).
 */
export { CallDeadlineError, GenerationBudgetSpentError } from './errors.js'
export { Meter, type MeterDeps, type MeteredCallRequest, type MeteredRun } from './Meter.js'
export { MeteredModelServer, type OpenAiPath, type Share } from './MeteredModelServer.js'
export { ModelServers } from './ModelServers.js'
export {
  type ChatInput,
  type GenerateInput,
  ModelRequestError,
  ModelServerUnavailableError,
  nsToMs,
  type UpstreamResponse as ModelServerAnswer,
} from '../../modelserverClient/ModelServerClient.js'
export type { ModelServerPoolParameters, ModelServerState } from '../../modelserverClient/ModelServerPool.js'
