import type { ValidSession } from '../auth/LoginService.js'
import type { ArrivalGate } from '../gate/ArrivalGate.js'
import { LLM_API_KEY_SCHEME } from '../gate/PublicSet.js'
import type { OperationInfo, OperationStage, RequestExchange, UnroutedRequest, UnroutedResult } from '../shared/http/index.js'
import { sessionTokenOf } from '../handlers/core/session.js'
import { AuthRequiredError } from '../gate/AuthRequiredError.js'
import { errorShapeOf, shapedAuthRequired } from './shapedAuthRequired.js'

/** What the gate keeps of a request's session in its locals (the security stage reads the same lookup). */
export type GateLocals = {
  session?: ValidSession | undefined
  sessionLookup?: Promise<ValidSession | undefined> | undefined
}

export type GateStageParameters = {
  gate: ArrivalGate
  /** The live session of a request: its token's or its sign-in-with-x proof's (`undefined`: none, or not valid). */
  validateSession: (request: Pick<UnroutedRequest, 'headers' | 'method'>) => Promise<ValidSession | undefined>
  /** Counts the JSON 401s (the redirects are counted by the gate itself). */
  onAuthRequired?: () => void
}

export type GateStage = {
  /**
   * The gate's answer to a request without a valid session on a closed path: 302 to /login, or its refusal, an
   * `AuthRequiredError` (401) given back as the stage's answer (`StageAnswer`: rendered by the error stage), in the
   * shape `operation` declares for its 401 when it is another API family's (an OpenAI-compatible route: OpenAI's error).
   */
  deny: (request: Pick<UnroutedRequest, 'path' | 'url' | 'headers' | 'ip'>, operation?: OperationInfo) => Promise<UnroutedResult | InstanceType<typeof AuthRequiredError>>
  /**
   * The pipeline stage, before the route: a request on a closed path proceeds only with a live session
   * (looked up once; kept in `locals` for the security stage) or, on an operation, a bearer credential
   * for the security stage to judge. `routeOf` tells which operation's security
   * the path is under (the request is matched once; the route stage reuses the match).
   */
  stage: <Locals extends GateLocals>(routeOf: (exchange: RequestExchange<Locals>) => OperationInfo | undefined) => OperationStage<Locals>
}

/**
 * Stage 3, the arrival gate (seed 000 §4.1) as the HTTP layer sees it. The gate runs before anything of the
 * route is parsed or revealed: a request without a valid session on a closed path (one whose operation
 * requires a session, or one without any operation) is denied here, whether the path exists or not.
 */
export function gateStage({ gate, validateSession, onAuthRequired }: GateStageParameters): GateStage {
  const deny: GateStage['deny'] = async (request, operation) => {
    const denial = await gate.deny(request)
    if (denial.kind === 'redirect') return { status: 302, headers: { Location: denial.location, 'Cache-Control': 'no-store' } }
    onAuthRequired?.()
    const shape = errorShapeOf(operation?.definition)
    if (shape === undefined) return new AuthRequiredError({ body: denial.body, component: 'AuthRequired' })
    const sent = request.headers.authorization !== undefined || request.headers['x-api-key'] !== undefined
    return new AuthRequiredError({ body: shapedAuthRequired(shape, denial.body, sent) })
  }
  return {
    deny,
    stage: (routeOf) => (exchange) => {
      const operation = routeOf(exchange)
      if (gate.isOpen(exchange.path, operation?.security)) return undefined
      const req = exchange.req
      // A bearer credential on an operation (the `/llm` API key, the overlord's JWT, a session token as bearer)
      // stands in for the session: the security stage judges it, and answers with `deny` when it fails.
      if (operation && req.headers.authorization !== undefined) return undefined
      // The same for `x-api-key` on the operations that take it (`llmApiKey`, the Anthropic SDKs' header).
      if (operation && req.headers['x-api-key'] !== undefined && operation.security.some((r) => LLM_API_KEY_SCHEME in r)) return undefined
      const locals = exchange.locals
      return (locals.sessionLookup ??= validateSession({ headers: req.headers, method: req.method })).then((session) => {
        if (session) {
          locals.session = session
          return undefined
        }
        return deny({ path: exchange.path, url: req.originalUrl, headers: req.headers, ip: req.ip ?? '' }, operation)
      })
    },
  }
}
