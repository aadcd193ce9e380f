import type { Address } from 'viem'
import type { CabinetService, ClearResult, Preflight, ProvisionResult, ReleasedKey, Roster, SignResult } from '../cabinet/CabinetService.js'
import type { EventSink } from '../catalogue/EventSink.js'
import { readUnlockProof, type UnlockProof, type Vault } from '../vault/Vault.js'
import type { BearerTokens } from './BearerTokens.js'
import type { IssuedChallenge, ShadowChallenges } from './ShadowChallenges.js'
import { ShadowError } from '../overlord/ShadowError.js'
import { AGENT_ID_PATTERN, COMPANY_PATTERN, isShadowScope, type ShadowScope } from './scopes.js'

const BEARER_HEADER = /^Bearer\s+(\S+)$/i

/** What a handler passes about the caller: the raw `Authorization` header and whether a session token came. */
export type Caller = { authorization?: string | undefined; hasSessionToken?: boolean }

export type SignedBody = { nonce?: unknown; signature?: unknown; confirm?: unknown; message?: unknown }

export type ShadowOverlordOptions = {
  challenges: ShadowChallenges
  bearer: BearerTokens | undefined
  vault: Vault
  cabinets: CabinetService
  events: EventSink
  overlordAddress: () => Address | undefined
  unlockProofPath: string
  /** Called when an audit event of a rejection cannot be written (the rejection itself still stands). */
  onAuditFailure?: (error: unknown) => void
  /** Called when an unlock initialised a new vault (logged by the app). */
  onVaultInitialised?: () => void
}

/** operationId → audit operation name and scope (bearer-only operations consume no challenge: scope null). */
const OPERATIONS: Record<string, { operation: string; scope: ShadowScope | null }> = {
  getCabinetPreflight: { operation: 'preflight', scope: null },
  provisionCabinet: { operation: 'provision', scope: 'cabinet.provision' },
  clearCabinet: { operation: 'clear', scope: 'cabinet.clear' },
  vaultSign: { operation: 'sign', scope: 'vault.sign' },
  releaseKey: { operation: 'release_key', scope: 'release.key' },
  reunlockVault: { operation: 'reunlock', scope: null },
}

/** `ShadowOverlordActionPayload` of asyncapi/events.yaml: operation names are short, target '' when none. */
type AuditContext = { operation: string; scope: ShadowScope | null; target: string; actor: string | null }

/**
 * The shadow-overlord tier as one framework-free facade: every operation authenticates, runs the consume
 * rules, touches the vault last, and writes an `admin.shadow_overlord_action` audit event whatever the
 * outcome (payload `ShadowOverlordActionPayload` of asyncapi/events.yaml: actor, scope, operation, target,
 * outcome, reason — never a key, signature or token).
 *
 * Audit is fail-closed for successes, like HashiCorp Vault: when the success event cannot be written the
 * caller gets 503 `audit_unavailable` and no secret-derived output (no key, no signature). A provision or
 * clear that completed before the action event failed stays done (its own cabinet event was written inside
 * the rolled-back-on-failure transaction); retrying is safe because provision is idempotent.
 */
export class ShadowOverlord {
  constructor(private readonly o: ShadowOverlordOptions) {}

  get unlockMessage(): string {
    return this.o.vault.unlockMessage
  }

  challenge(body: { scope?: unknown; params?: unknown }): Promise<IssuedChallenge> {
    // An unknown scope is audited with scope null and reason `invalid_scope`.
    const scope: ShadowScope | null = isShadowScope(body?.scope) ? body.scope : null
    const params = body?.params && typeof body.params === 'object' ? (body.params as Record<string, unknown>) : {}
    const target = typeof params.company === 'string' ? params.company : typeof params.agent_id === 'string' ? params.agent_id : ''
    return this.#audited({ operation: 'challenge', scope, target, actor: null }, async () => {
      const issued = await this.o.challenges.issue(body?.scope, body?.params)
      return { nonce: issued.nonce, message: issued.message, expires_at: issued.expires_at }
    })
  }

  verify(body: SignedBody): Promise<{ jwt: string; exp: number }> {
    return this.#audited({ operation: 'verify', scope: 'auth', target: '', actor: null }, async (ctx) => {
      const bearer = this.#bearer()
      await this.o.challenges.consume({ scope: 'auth', nonce: body?.nonce, signature: body?.signature, params: {} })
      const overlord = this.o.challenges.requireOverlord()
      ctx.actor = overlord
      return bearer.issue(overlord)
    })
  }

  preflight(caller: Caller, company: string): Promise<Preflight> {
    return this.#audited({ operation: 'preflight', scope: null, target: company, actor: null }, async (ctx) => {
      ctx.actor = await this.#authenticate(caller)
      checkCompany(company)
      return this.o.cabinets.preflight(company)
    })
  }

  provision(caller: Caller, company: string, body: SignedBody): Promise<ProvisionResult> {
    return this.#audited({ operation: 'provision', scope: 'cabinet.provision', target: company, actor: null }, async (ctx) => {
      ctx.actor = await this.#authenticate(caller)
      checkCompany(company)
      await this.o.challenges.consume({ scope: 'cabinet.provision', nonce: body?.nonce, signature: body?.signature, params: { company } })
      return this.o.cabinets.provision(company)
    })
  }

  clear(caller: Caller, company: string, body: SignedBody): Promise<ClearResult> {
    return this.#audited({ operation: 'clear', scope: 'cabinet.clear', target: company, actor: null }, async (ctx) => {
      ctx.actor = await this.#authenticate(caller)
      checkCompany(company)
      await this.o.challenges.consume({
        scope: 'cabinet.clear',
        nonce: body?.nonce,
        signature: body?.signature,
        params: { company, confirm: typeof body?.confirm === 'string' ? body.confirm : undefined },
      })
      return this.o.cabinets.clear(company)
    })
  }

  sign(caller: Caller, agentId: string, body: SignedBody): Promise<SignResult> {
    return this.#audited({ operation: 'sign', scope: 'vault.sign', target: agentId, actor: null }, async (ctx) => {
      ctx.actor = await this.#authenticate(caller)
      checkAgentId(agentId)
      if (typeof body?.message !== 'string') throw new ShadowError('invalid_params', 'message must be a string.')
      await this.o.challenges.consume({ scope: 'vault.sign', nonce: body.nonce, signature: body.signature, params: { agent_id: agentId }, message: body.message })
      return this.o.cabinets.sign(agentId, body.message)
    })
  }

  releaseKey(caller: Caller, agentId: string, body: SignedBody): Promise<ReleasedKey> {
    return this.#audited({ operation: 'release_key', scope: 'release.key', target: agentId, actor: null }, async (ctx) => {
      ctx.actor = await this.#authenticate(caller)
      checkAgentId(agentId)
      await this.o.challenges.consume({
        scope: 'release.key',
        nonce: body?.nonce,
        signature: body?.signature,
        params: { agent_id: agentId, confirm: typeof body?.confirm === 'string' ? body.confirm : undefined },
      })
      const released = await this.o.cabinets.releaseKey(agentId)
      try {
        await this.o.events.emit({
          kind: 'admin.shadow_overlord_release_key',
          severity: 'critical',
          payload: { agent_id: agentId, address: released.address },
        })
      } catch (cause) {
        throw new ShadowError('audit_unavailable', 'The audit log cannot be written; the key was not released.', { cause })
      }
      return released
    })
  }

  /**
   * Bearer required (defence in depth; the unlock proof is the real factor). Flow B when `body` carries
   * `{address, signature, message}`; flow A (proof file) when the body is absent or empty.
   */
  reunlock(caller: Caller, body: UnlockProof | undefined): Promise<{ unlocked: true; flow: 'A' | 'B' }> {
    const flowB = body !== undefined && body !== null && typeof body === 'object' && Object.keys(body).length > 0
    return this.#audited({ operation: 'reunlock', scope: null, target: '', actor: null }, async (ctx) => {
      ctx.actor = await this.#authenticate(caller)
      const proof = flowB ? body : await readUnlockProof(this.o.unlockProofPath)
      const result = await this.o.vault.unlock(proof)
      if (result.initialised) this.o.onVaultInitialised?.()
      return { unlocked: true, flow: flowB ? 'B' : 'A' }
    })
  }

  /** Public read (no audit: not an overlord operation, and unauthenticated reads must not flood the log). */
  async roster(company: string): Promise<Roster> {
    checkCompany(company)
    return this.o.cabinets.roster(company)
  }

  /** The bearer check alone (route-level security handler): the overlord address, or undefined. */
  async authenticate(caller: Caller): Promise<Address | undefined> {
    // Without a bearer header `#authenticate` can only throw; session operations accept the bearer as an
    // alternative, so this runs on every session request — skip building an error (stack trace) to discard.
    if (!caller.authorization || !BEARER_HEADER.test(caller.authorization.trim())) return undefined
    try {
      return await this.#authenticate(caller)
    } catch {
      return undefined
    }
  }

  /**
   * For a request the route-level bearer check turned away: audits the rejection under the operation and
   * returns the precise error (401 `bearer_required` / `bearer_invalid` / `insufficient_privilege`, or 503).
   */
  async rejectUnauthenticated(caller: Caller, operationId: string, target: string): Promise<ShadowError> {
    const { operation, scope } = OPERATIONS[operationId] ?? { operation: operationId, scope: null }
    try {
      await this.#audited({ operation, scope, target, actor: null }, async () => {
        await this.#authenticate(caller)
        throw new ShadowError('bearer_invalid', 'Bearer token is invalid.')
      })
    } catch (error) {
      if (error instanceof ShadowError) return error
      throw error
    }
    return new ShadowError('bearer_invalid', 'Bearer token is invalid.')
  }

  async #authenticate(caller: Caller): Promise<Address> {
    const overlord = this.o.challenges.requireOverlord()
    const bearer = this.#bearer()
    const header = caller.authorization?.trim()
    const match = header ? BEARER_HEADER.exec(header) : null
    if (!match) {
      if (caller.hasSessionToken) throw new ShadowError('insufficient_privilege', 'A session token does not grant the shadow-overlord tier.')
      throw new ShadowError('bearer_required', 'Authorization: Bearer <jwt> from POST /admin/shadow/verify is required.')
    }
    return (await bearer.verify(match[1]!, overlord)).sub
  }

  #bearer(): BearerTokens {
    this.o.challenges.requireOverlord()
    if (!this.o.bearer) throw new ShadowError('overlord_not_configured', 'SHADOW_JWT_SECRET is not configured on this server.')
    return this.o.bearer
  }

  async #audited<T>(ctx: AuditContext, run: (ctx: AuditContext) => Promise<T>): Promise<T> {
    let result: T
    try {
      result = await run(ctx)
    } catch (error) {
      const reason = error instanceof ShadowError ? error.code : ((error as { code?: unknown })?.code as string | undefined) ?? 'internal_error'
      try {
        await this.#emitAction(ctx, 'rejected', typeof reason === 'string' && /^[a-z][a-z0-9_]*$/.test(reason) ? reason : 'internal_error')
      } catch (auditError) {
        this.o.onAuditFailure?.(auditError)
      }
      throw error
    }
    try {
      await this.#emitAction(ctx, 'ok')
    } catch (cause) {
      throw new ShadowError('audit_unavailable', 'The audit log cannot be written; the operation result is withheld.', { cause })
    }
    return result
  }

  #emitAction(ctx: AuditContext, outcome: 'ok' | 'rejected', reason?: string) {
    return this.o.events.emit({
      kind: 'admin.shadow_overlord_action',
      severity: outcome === 'ok' ? 'info' : 'warning',
      payload: {
        actor: ctx.actor,
        scope: ctx.scope,
        operation: ctx.operation,
        target: ctx.target,
        outcome,
        ...(reason === undefined ? {} : { reason }),
      },
    })
  }
}

function checkCompany(company: string): void {
  if (!COMPANY_PATTERN.test(company)) throw new ShadowError('invalid_params', 'company must match ^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$.')
}

function checkAgentId(agentId: string): void {
  if (!AGENT_ID_PATTERN.test(agentId)) throw new ShadowError('invalid_params', 'agent_id must be 1-256 characters without whitespace.')
}
