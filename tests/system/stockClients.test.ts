/**
 * The Responses and Messages APIs against `npm start`: the stock clients (`@anthropic-ai/sdk`, `openai` Responses, LangChain
 * `ChatAnthropic` and `ChatOpenAI` with `useResponsesApi`; the cases of tests/llm/stockClientCases.ts) pass against
 * the system as `npm start` runs it — the model server directly and the gateway's `/llm/v1` with an `/llm` API key
 * (`x-api-key` for the Anthropic clients, `Authorization: Bearer` for the OpenAI ones), `tool_choice` naming a
 * function returning a call of it on every surface. The shared system of the browser project (its defaults
 * suffice: a few dozen calls of one fresh wallet, well within the default quotas); its gateway validates every
 * response it sends (a mismatch is a 500 the clients would throw on).
 */
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll } from 'vitest'
import { startSystem, type System } from '../browser/support/startSystem.js'
import { describeStockClients, type StockClientTarget } from '../llm/stockClientCases.js'
import { createLlmKey, walletLogin } from '../support/walletLogin.js'

let system: System
let apiKey: string

beforeAll(async () => {
  system = await startSystem()
  apiKey = await createLlmKey(system.url, await walletLogin(system.url, privateKeyToAccount(generatePrivateKey())), 'stock clients (npm start)')
})

afterAll(async () => system?.close())

const targets: StockClientTarget[] = [
  { name: 'model server started by npm start', anthropicBase: () => system.modelServerUrl, openaiBase: () => `${system.modelServerUrl}/v1` },
  { name: 'gateway /llm/v1 started by npm start', anthropicBase: () => `${system.url}/llm`, openaiBase: () => `${system.url}/llm/v1` },
]
describeStockClients(targets, () => apiKey)
