import type { ChatRequest, GenerateRequest } from '../../../generated/modelserver/types.gen.js'
import type { NullsDropped } from './nullAsAbsent.js'

/**
 * `/api/generate` and `/api/chat` bodies as the handlers read them: a `null` member was dropped as absent
 * (`nullAsAbsent.ts`), and the other surfaces' translations (`/v1/...`) build them without nulls.
 */
export type GenerateBody = NullsDropped<GenerateRequest>
export type ChatBody = NullsDropped<ChatRequest>
