import { CoreAgent } from '../../llm/CoreAgent.js'
import { LlmKeys } from '../../llm/LlmKeys.js'
import { OpenAiProxy } from '../../llm/OpenAiProxy.js'
import type { DomainInit, DomainPlugin } from '../DomainPlugin.js'

/**
 * `/llm`: the wallets' API keys, and the `/llm/v1` proxy and `/coreagent` over the core's
 * model-server client and marketplace (one client for every model-server call). Its `llmBearer` scheme is
 * answered by `src/handlers/llm/llmSecurity.ts`.
 */
export const initLlm: DomainInit = (core) => {
  const { db, now, modelServer, marketplace, config, backgroundCommit } = core
  return {
    services: {
      llmKeys: new LlmKeys(db, now, { commit: backgroundCommit }),
      openAi: new OpenAiProxy({ models: modelServer, marketplace, now }),
      coreAgent: new CoreAgent({ db, marketplace, embedModel: config.modelServer.embedModel, now }),
    },
  }
}

export const llmDomain: DomainPlugin = { name: 'llm', create: initLlm }
