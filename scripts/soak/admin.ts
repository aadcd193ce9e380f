/**
 * The soak's administrator: the overlord's operations, each through a different replica
 * (directly, not through the balancer, so which replica answers is known): the vault unlocked through replica
 * 0 only (flow A: the proof file each replica's data dir holds, as `npm start` writes it), then per round a
 * cabinet provisioned through one replica, a message signed as its CEO through the next, and every other
 * cabinet cleared through the one after. At the end, `reconcileCabinets` reads every cabinet still provisioned
 * and signs as its CEO through every replica: one deployment, one admin tier.
 */
import { createHash, randomBytes } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts'
import { unlockMessageFor } from '../../src/vault/Vault.js'

export type Overlord = { account: PrivateKeyAccount; jwtSecret: string; env: Record<string, string> }

/** A fresh overlord key for the soak and the gateway settings naming it. */
export function soakOverlord(): Overlord {
  const account = privateKeyToAccount(generatePrivateKey())
  const jwtSecret = randomBytes(32).toString('hex')
  return { account, jwtSecret, env: { SHADOW_OVERLORD_ADDRESS: account.address, SHADOW_JWT_SECRET: jwtSecret } }
}

/** Flow A's unlock proof in a replica's data dir (the default `SHADOW_UNLOCK_PROOF_PATH`). */
export async function writeUnlockProof(overlord: Overlord, dataDir: string, publicOrigin: string): Promise<void> {
  const message = unlockMessageFor(publicOrigin)
  mkdirSync(dataDir, { recursive: true })
  const proof = { address: overlord.account.address, signature: await overlord.account.signMessage({ message }), message }
  writeFileSync(join(dataDir, 'vault_unlock_proof.json'), `${JSON.stringify(proof)}\n`, { mode: 0o600 })
}

export type AdminOutcomes = {
  /** Every admin call: which operation, through which replica, its status. */
  calls: { op: string; replica: number; status: number; error?: string }[]
  /** Cabinets provisioned (200) and not cleared since. */
  live: Set<string>
  cleared: Set<string>
}

export function newAdminOutcomes(): AdminOutcomes {
  return { calls: [], live: new Set(), cleared: new Set() }
}

type Reply = { status: number; body: any; text: string }

async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  try {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(120_000), // a provision makes 8 keys: slow on a loaded machine
    })
    const text = await res.text()
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      parsed = undefined
    }
    return { status: res.status, body: parsed, text }
  } catch (error) {
    return { status: 0, body: undefined, text: String(error) }
  }
}

/** The overlord's session on one replica: a bearer, and signed single-use challenges for each operation. */
class AdminSession {
  #bearer: { authorization: string } | undefined
  constructor(
    readonly base: string,
    readonly overlord: Overlord,
  ) {}

  async signed(scope: string, params?: Record<string, string>): Promise<{ nonce: string; signature: string } | Reply> {
    const c = await call(this.base, 'POST', '/admin/shadow/challenge', params ? { scope, params } : { scope })
    if (c.status !== 200) return c
    return { nonce: c.body.nonce as string, signature: await this.overlord.account.signMessage({ message: c.body.message as string }) }
  }

  async bearer(): Promise<{ authorization: string } | Reply> {
    if (this.#bearer) return this.#bearer
    const s = await this.signed('auth')
    if ('status' in s) return s
    const v = await call(this.base, 'POST', '/admin/shadow/verify', s)
    if (v.status !== 200) return v
    this.#bearer = { authorization: `Bearer ${v.body.jwt}` }
    return this.#bearer
  }

  /** One operation with a fresh bearer on a 401 (the bearer lives 300 s; a restarted replica may not know it). */
  async op(path: string, scope: string | undefined, params: Record<string, string> | undefined, extra: Record<string, unknown> = {}, method = 'POST'): Promise<Reply> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const bearer = await this.bearer()
      if ('status' in bearer) return bearer as Reply
      let body: Record<string, unknown> | undefined = Object.keys(extra).length ? { ...extra } : undefined
      if (scope) {
        const s = await this.signed(scope, params)
        if ('status' in s) return s
        body = { ...s, ...extra }
      }
      const r = await call(this.base, method, path, body, bearer as Record<string, string>)
      if (r.status === 401 && attempt === 0) {
        this.#bearer = undefined
        continue
      }
      return r
    }
    throw new Error('unreachable')
  }
}

const ceoOf = (company: string) => `company:${company}:cabinet:ceo`

/** Signs `message` as `company`'s CEO through one replica: the address and signature, or the failing reply. */
export async function signAsCeo(session: AdminSession, company: string, message: string): Promise<Reply> {
  const agent = ceoOf(company)
  const sha = `0x${createHash('sha256').update(message, 'utf8').digest('hex')}` // the scope's `0x` + 64 hex
  return session.op(`/vault/sign/${agent}`, 'vault.sign', { agent_id: agent, message_sha256: sha }, { message })
}

/**
 * How long after the traffic stopped every replica held the data key (preflight's `replicas_live` and
 * `replicas_unlocked`, through the first replica), polled every 500 ms up to `timeoutMs`: a replica restarted
 * late in the run is unlocked by a peer a propagation round or two after it starts, and the cabinets are
 * checked through every replica once all are. `converged: false` if they never were.
 */
export async function unlockConvergence(sessions: AdminSession[], timeoutMs: number): Promise<{ converged: boolean; ms: number; live: number; unlocked: number }> {
  const t0 = Date.now()
  let last = { live: 0, unlocked: 0 }
  for (;;) {
    const r = await sessions[0]!.op('/admin/cabinet/SOAKPROBE/preflight', undefined, undefined, {}, 'GET')
    if (r.status === 200) last = { live: Number(r.body.replicas_live), unlocked: Number(r.body.replicas_unlocked) }
    const ms = Date.now() - t0
    if (last.live === sessions.length && last.unlocked === last.live) return { converged: true, ms, ...last }
    if (ms > timeoutMs) return { converged: false, ms, ...last }
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
}

export function adminSessions(urls: string[], overlord: Overlord): AdminSession[] {
  return urls.map((u) => new AdminSession(u, overlord))
}

/**
 * The administrator's traffic until `stop()`: unlock through replica 0, then rounds of provision (replica
 * r), sign (r+1), clear of every other cabinet (r+2), one round every `everyMs`.
 */
export async function adminClient(sessions: AdminSession[], out: AdminOutcomes, stop: () => boolean, everyMs = 3000): Promise<void> {
  const record = (op: string, replica: number, r: Reply) => out.calls.push({ op, replica, status: r.status, ...(r.status >= 300 || r.status === 0 ? { error: r.text.slice(0, 200) } : {}) })
  const n = sessions.length
  // The operator addresses replicas directly: one being restarted refuses the connection (status 0), and the
  // operator turns to the next one, as with any replica down. Only an answer counts.
  // `unanswered`: the replicas tried before that gave no answer — a replica killed after doing the operation
  // and before answering is one of them, so the operation may already have been done.
  const onSomeReplica = async (first: number, call: (session: AdminSession) => Promise<Reply>): Promise<{ replica: number; reply: Reply; unanswered: number }> => {
    let last: { replica: number; reply: Reply; unanswered: number } | undefined
    for (let k = 0; k < n; k++) {
      const replica = (first + k) % n
      last = { replica, reply: await call(sessions[replica]!), unanswered: k }
      if (last.reply.status !== 0) return last
    }
    return last!
  }
  const unlock = await onSomeReplica(0, (x) => x.op('/vault/credentials/reunlock', undefined, undefined))
  record('unlock', unlock.replica, unlock.reply)
  for (let round = 0; !stop(); round++) {
    const company = `SOAK${round}${randomBytes(2).toString('hex').toUpperCase()}`.replace(/[^A-Z0-9]/g, '')
    const p = await onSomeReplica(round % n, (x) => x.op(`/admin/cabinet/${company}/provision`, 'cabinet.provision', { company }))
    record('provision', p.replica, p.reply)
    if (p.reply.status !== 200 && p.reply.status !== 201) continue // nothing to sign or clear (the reply is recorded)
    out.live.add(company)
    const s = await onSomeReplica(p.replica + 1, (x) => signAsCeo(x, company, `soak round ${round}`))
    record('sign', s.replica, s.reply)
    if (round % 2 === 1) {
      const confirm = `DESTROY-${company}-CABINET`
      const c = await onSomeReplica(s.replica + 1, (x) => x.op(`/admin/cabinet/${company}/clear`, 'cabinet.clear', { company, confirm }, { confirm }))
      record('clear', c.replica, c.reply)
      // 404 after an unanswered attempt: that replica cleared it and died before answering (CI, 2026-11-27: a
      // kill -9 in that instant); `reconcileCabinets` checks every cleared cabinet is gone through every replica.
      if (c.reply.status === 200 || (c.reply.status === 404 && c.unanswered > 0)) {
        out.live.delete(company)
        out.cleared.add(company)
      }
    }
    await new Promise((r) => setTimeout(r, everyMs))
  }
}

/**
 * Every cabinet still provisioned: its roster readable (200, 8 members) and a message signable as its CEO
 * (200, by the roster's CEO address) through every replica; every cabinet cleared: gone (404) through every
 * replica. Returns the failures, `company@replica: what`.
 */
export async function reconcileCabinets(sessions: AdminSession[], out: AdminOutcomes): Promise<string[]> {
  const failures: string[] = []
  for (const company of out.live) {
    for (const [i, session] of sessions.entries()) {
      const roster = await call(session.base, 'GET', `/cabinet/${company}`)
      if (roster.status !== 200 || (roster.body?.members ?? []).length !== 8) {
        failures.push(`${company}@${i}: roster ${roster.status}`)
        continue
      }
      const ceo = (roster.body.members as { role: string; address: string | null }[]).find((m) => m.role === 'ceo')
      const signed = await signAsCeo(session, company, `reconcile ${company} at replica ${i}`)
      if (signed.status !== 200) failures.push(`${company}@${i}: sign ${signed.status} ${signed.body?.error ?? ''}`)
      else if (ceo?.address && signed.body.address?.toLowerCase() !== ceo.address.toLowerCase()) failures.push(`${company}@${i}: signed by ${signed.body.address}, roster says ${ceo.address}`)
    }
  }
  for (const company of out.cleared) {
    for (const [i, session] of sessions.entries()) {
      const roster = await call(session.base, 'GET', `/cabinet/${company}`)
      if (roster.status !== 404) failures.push(`${company}@${i}: cleared, roster ${roster.status}`)
    }
  }
  return failures
}
