import { errors, jwtVerify, SignJWT } from 'jose'
import type { Address } from 'viem'
import { ShadowError } from '../overlord/ShadowError.js'
import { addressesEqual } from '../overlord/verifyOverlordSignature.js'

export const BEARER_TTL_SECONDS = 300
export const BEARER_ISSUER = 'svc-shadow-overlord'
export const BEARER_AUDIENCE = 'svc-shadow-admin'

export type BearerClaims = { sub: Address; scope: 'auth'; exp: number; iat: number }

/**
 * Bearer tokens of the shadow tier (seed 000 §2.3, §3.2): HS256 only (the verifier pins the algorithm, so
 * `none`, RS256/ES256 and alg-confusion tokens are rejected), subject = the overlord address, claim
 * `scope: "auth"`, lifetime 300 s. Rotating `SHADOW_JWT_SECRET` and restarting invalidates every token.
 */
export class BearerTokens {
  constructor(
    private readonly secret: Uint8Array,
    private readonly now: () => number = () => Math.floor(Date.now() / 1000),
  ) {}

  async issue(subject: Address): Promise<{ jwt: string; exp: number }> {
    const iat = this.now()
    const exp = iat + BEARER_TTL_SECONDS
    const jwt = await new SignJWT({ scope: 'auth' })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(subject)
      .setIssuer(BEARER_ISSUER)
      .setAudience(BEARER_AUDIENCE)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .sign(this.secret)
    return { jwt, exp }
  }

  /** Verifies a token for the current overlord; 401 `bearer_invalid` on any defect (never says which secret). */
  async verify(token: string, overlord: Address): Promise<BearerClaims> {
    try {
      const { payload } = await jwtVerify(token, this.secret, {
        algorithms: ['HS256'],
        issuer: BEARER_ISSUER,
        audience: BEARER_AUDIENCE,
        requiredClaims: ['sub', 'exp', 'iat'],
        currentDate: new Date(this.now() * 1000),
        clockTolerance: 0,
      })
      if (payload.scope !== 'auth') throw new ShadowError('bearer_invalid', 'Bearer token is not bound to scope auth.')
      if (typeof payload.sub !== 'string' || !addressesEqual(payload.sub, overlord)) {
        throw new ShadowError('bearer_invalid', 'Bearer token subject is not the overlord address.')
      }
      return { sub: overlord, scope: 'auth', exp: payload.exp!, iat: payload.iat! }
    } catch (error) {
      if (error instanceof ShadowError) throw error
      const expired = error instanceof errors.JWTExpired
      throw new ShadowError('bearer_invalid', expired ? 'Bearer token has expired; verify a new auth challenge.' : 'Bearer token is invalid.')
    }
  }
}
