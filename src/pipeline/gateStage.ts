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
  /**
   * Answers the gate's refusal (the app's error catalogue) instead of throwing it: the 401 is the answer to every
   * request without a session on a closed path, and a thrown refusal — a rejected promise per request — cost
   * 15–20 µs of CPU more per 401 (`npm run bench -- pipeline -- --routes unauthorized`). Without it, thrown.
   */
  answer?: (refusal: InstanceType<typeof AuthRequiredError>) => UnroutedResult
}

export type GateStage = {
  /**
   * The gate's answer to a request without a valid session on a closed path: 302 to /login, or an
   * `AuthRequiredError` (401; answered by `answer`, else thrown), in the shape `operation` declares for its 401
   * when it is another API family's (an OpenAI-compatible route: OpenAI's error).
   */
  deny: (request: Pick<UnroutedRequest, 'path' | 'url' | 'headers' | 'ip'>, operation?: OperationInfo) => Promise<UnroutedResult>
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
export function gateStage({ gate, validateSession, onAuthRequired, answer }: GateStageParameters): GateStage {
  const refuse = (refusal: InstanceType<typeof AuthRequiredError>): UnroutedResult => {
    if (answer) return answer(refusal)
    throw refusal
  }
  const deny = async (request: Pick<UnroutedRequest, 'path' | 'url' | 'headers' | 'ip'>, operation?: OperationInfo): Promise<UnroutedResult> => {
    const denial = await gate.deny(request)
    if (denial.kind === 'redirect') return { status: 302, headers: { Location: denial.location, 'Cache-Control': 'no-store' } }
    onAuthRequired?.()
    const shape = errorShapeOf(operation?.definition)
    if (shape === undefined) return refuse(new AuthRequiredError({ body: denial.body, component: 'AuthRequired' }))
    const sent = request.headers.authorization !== undefined || request.headers['x-api-key'] !== undefined
    return refuse(new AuthRequiredError({ body: shapedAuthRequired(shape, denial.body, sent) }))
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
