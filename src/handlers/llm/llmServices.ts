import { CoreAgent } from '../../llm/CoreAgent.js'
import { OpenAiProxy } from '../../llm/OpenAiProxy.js'
import type { Services } from '../types.js'

type LlmCores = { openAi: OpenAiProxy; coreAgent: CoreAgent }
const built = new WeakMap<Services, LlmCores>()

/**
 * The `/llm/v1` proxy and `/coreagent` built over the core's model-server client and marketplace (one client
 * for every model-server call), once per services object.
 */
export function llmCoresOf(services: Services): LlmCores {
  let cores = built.get(services)
  if (!cores) {
    const { modelServer, marketplace, db, now, config } = services
    cores = {
      openAi: new OpenAiProxy({ modelServer, marketplace, now }),
      coreAgent: new CoreAgent({ db, modelServer, marketplace, embedModel: config.modelServer.embedModel, now }),
    }
    built.set(services, cores)
  }
  return cores
}
