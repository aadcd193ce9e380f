import type { ValidSession } from '../auth/LoginService.js'
import type { ArrivalGate } from '../gate/ArrivalGate.js'
import type { UnroutedRequest, UnroutedResult } from '../shared/http/index.js'
import { sessionTokenOf } from '../handlers/core/session.js'

export type GateStageParameters = {
  gate: ArrivalGate
  /** The live session of a token (`undefined`: none, expired or revoked). */
  validateSession: (token: string | undefined) => Promise<ValidSession | undefined>
  /** Counts the JSON 401s (the redirects are counted by the gate itself). */
  onAuthRequired?: () => void
}

export type GateStage = {
  /** The gate's answer to a request without a valid session on a closed path: 302 to /login or 401. */
  deny: (request: Pick<UnroutedRequest, 'path' | 'url' | 'headers' | 'ip'>) => Promise<UnroutedResult>
  /** Requests the document has no operation for: closed paths are gated first, open ones get 404/405. */
  unrouted: (request: UnroutedRequest) => Promise<UnroutedResult>
}

/**
 * Stage 3, the arrival gate (seed 000 §4.1) as the HTTP layer sees it. The gate runs before anything of the
 * route: for a routed request the session security handlers (`securityStage`) decide and `deny` answers;
 * an unrouted path is gated here before it may learn whether the path exists.
 */
export function gateStage({ gate, validateSession, onAuthRequired }: GateStageParameters): GateStage {
  const deny = async (request: Pick<UnroutedRequest, 'path' | 'url' | 'headers' | 'ip'>): Promise<UnroutedResult> => {
    const denial = await gate.deny(request)
    if (denial.kind === 'redirect') return { status: 302, headers: { Location: denial.location, 'Cache-Control': 'no-store' } }
    onAuthRequired?.()
    return { status: 401, body: denial.body, component: 'AuthRequired' }
  }
  return {
    deny,
    unrouted: async (request) => {
      const open = gate.isOpen(request.path, undefined) || (await validateSession(sessionTokenOf(request))) !== undefined
      if (!open) return deny(request)
      return request.reason === 'not_found'
        ? { status: 404, body: { error: 'not_found', message: `no route for ${request.method} ${request.path}` }, component: 'Error' }
        : { status: 405, body: { error: 'method_not_allowed', message: `${request.method} is not allowed on ${request.path}` }, component: 'Error' }
    },
  }
}

