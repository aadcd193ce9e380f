/**
 * Replays the shadow-overlord machines (nonce.yaml, bearer.yaml, cabinet.yaml, vault.yaml — seed 000 §3.1–3.4)
 * against a live gateway by URL, signing with a test overlord key. Every response is checked against
 * `openapi/gateway.yaml`. Each row starts from fresh data: the replayer reaches `from`, performs the row's
 * action, compares `expect`, then probes `to`. Rows needing a harness hook the target lacks are skipped
 * (reported, never counted as passed).
 */
import { createHash, randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { type Hex, recoverMessageAddress } from 'viem'
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts'
import { parse } from 'yaml'
import { createOpenApiRouter, loadOpenApiDocument, type OpenApiRouter } from '../../../src/shared/http/index.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const repoRoot = path.resolve(here, '../../..')

export type Hook = 'clock' | 'restart' | 'proof_file' | 'faults' | 'login'

export type ShadowTarget = {
  /** Base URL of the gateway (re-read after a restart). */
  url: () => string
  /** The overlord key whose address the gateway is configured with. */
  overlord: PrivateKeyAccount
  /** Advances the gateway's clock; without it `wait` rows sleep for real (only with `allowRealWait`). */
  advance?: (seconds: number) => Promise<void>
  /** Restarts the gateway (same data dir) with these env overrides (`SHADOW_JWT_SECRET`, …). */
  restart?: (env?: Record<string, string>) => Promise<void>
  /** Writes (or, with null, removes) the flow-A unlock proof file the gateway reads. */
  writeUnlockProof?: (proof: { address: string; signature: string; message: string } | null) => Promise<void>
  /** Installs a failure-injection hook on cabinet steps (undefined removes it). */
  setFault?: (hook: ((step: string) => void) | undefined) => void
  /** Sleep for real when a `wait` row has no clock hook (slow: 120 s / 300 s). */
  allowRealWait?: boolean
  /** False when the target does not serve wallet login (the shadow tier alone); default true. */
  servesLogin?: boolean
  /** Sees every response (the key-leak sweep collects them). */
  onResponse?: (response: { method: string; path: string; status: number; text: string }) => void
}

type Do = { action: string; [k: string]: unknown }
export type Row = {
  id: string
  'x-designed'?: boolean
  from: string
  event: string
  condition?: string
  do: Do
  needs?: Hook[]
  restartEnv?: Record<string, string>
  expect?: { status?: number; error?: string; body?: Record<string, unknown> }
  to: string
  also?: string
}
export type ShadowMachine = { machine: string; seed: string; states: string[]; rows: Row[] }
export type RowResult = { id: string; ok: boolean; skipped?: string; problems: string[] }

export const MACHINE_FILES = { nonce: 'nonce.yaml', bearer: 'bearer.yaml', cabinet: 'cabinet.yaml', vault: 'vault.yaml' } as const

export function loadShadowMachine(name: keyof typeof MACHINE_FILES): ShadowMachine {
  return parse(readFileSync(path.join(here, MACHINE_FILES[name]), 'utf8')) as ShadowMachine
}

type Res = { status: number; body: any; text: string; headers: Headers }
const CONSUME_REJECTIONS = new Set(['nonce_not_found', 'nonce_expired', 'nonce_consumed', 'scope_mismatch', 'params_mismatch', 'bad_signature', 'confirm_mismatch', 'message_hash_mismatch'])
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
const sha256 = (s: string) => `0x${createHash('sha256').update(s, 'utf8').digest('hex')}`
const fresh = (prefix: string) => `${prefix}${randomBytes(4).toString('hex').toUpperCase()}`

function highS(signature: Hex): Hex {
  const s = BigInt(`0x${signature.slice(66, 130)}`)
  return `0x${signature.slice(2, 66)}${(N - s).toString(16).padStart(64, '0')}${signature.endsWith('1b') ? '1c' : '1b'}`
}

/** One replay session against a target: HTTP with document validation, and the shadow-tier vocabulary. */
export class ShadowReplayer {
  readonly problems: string[] = []
  readonly intruder = privateKeyToAccount(generatePrivateKey())
  #router: OpenApiRouter
  #bearer: { authorization: string } | undefined
  #unlockMessage: string | undefined

  constructor(readonly target: ShadowTarget) {
    this.#router = createOpenApiRouter({ document: loadOpenApiDocument(path.join(repoRoot, 'openapi', 'gateway.yaml')), handlers: {} })
  }

  /** HTTP call; the response is validated against the document (problems collected on `this.problems`). */
  async call(method: string, urlPath: string, body?: unknown, headers: Record<string, string> = {}): Promise<Res> {
    const res = await fetch(`${this.target.url()}${urlPath}`, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await res.text()
    this.target.onResponse?.({ method, path: urlPath, status: res.status, text })
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      json = undefined
    }
    const operation = this.#router.matchOperation(method, urlPath.split('?')[0]!)
    if (!operation) this.problems.push(`${method} ${urlPath}: no operation in the document`)
    else {
      const contentType = res.headers.get('content-type') ?? undefined
      const errors = this.#router.responseValidator.validate(
        operation.definition as never,
        { status: res.status, body: json === undefined ? text : json, contentType, headers: headersObject(res.headers) },
        method.toLowerCase(),
      )
      for (const e of errors) this.problems.push(`${method} ${urlPath} → ${res.status}: ${e}`)
    }
    return { status: res.status, body: json as any, text, headers: res.headers }
  }

  async unlockMessage(): Promise<string> {
    if (!this.#unlockMessage) {
      const page = await this.call('GET', '/cabinet')
      const cfg = /<script type="application\/json" id="cfg">([\s\S]*?)<\/script>/.exec(page.text)
      if (!cfg) throw new Error('the /cabinet page carries no unlock message')
      this.#unlockMessage = (JSON.parse(cfg[1]!) as { unlockMessage: string }).unlockMessage
    }
    return this.#unlockMessage
  }

  async unlockProof(signer: PrivateKeyAccount = this.target.overlord) {
    const message = await this.unlockMessage()
    return { address: this.target.overlord.address, signature: await signer.signMessage({ message }), message }
  }

  paramsFor(scope: string, company: string, message = 'conformance message'): Record<string, string> {
    const agent = `company:${company}:cabinet:ceo`
    switch (scope) {
      case 'cabinet.provision':
        return { company }
      case 'cabinet.clear':
        return { company, confirm: `DESTROY-${company}-CABINET` }
      case 'vault.sign':
        return { agent_id: agent, message_sha256: sha256(message) }
      case 'release.key':
        return { agent_id: agent, confirm: 'RELEASE-PRIVATE-KEY' }
      default:
        return {}
    }
  }

  async challenge(scope: string, params: Record<string, string>, signer: PrivateKeyAccount | 'high_s' = this.target.overlord) {
    const res = await this.call('POST', '/admin/shadow/challenge', Object.keys(params).length ? { scope, params } : { scope })
    if (res.status !== 200) throw new Error(`challenge ${scope} → ${res.status} ${res.text}`)
    const message = res.body.message as string
    const good = await this.target.overlord.signMessage({ message })
    const signature = signer === 'high_s' ? highS(good) : signer === this.target.overlord ? good : await signer.signMessage({ message })
    return { nonce: res.body.nonce as string, signature, message, scope, params }
  }

  async bearer(): Promise<{ authorization: string }> {
    if (!this.#bearer) {
      const c = await this.challenge('auth', {})
      const v = await this.call('POST', '/admin/shadow/verify', { nonce: c.nonce, signature: c.signature })
      if (v.status !== 200) throw new Error(`verify → ${v.status} ${v.text}`)
      this.#bearer = { authorization: `Bearer ${v.body.jwt}` }
    }
    return this.#bearer
  }

  /** A live wallet session of a non-overlord user (seed §4.3); a placeholder where login is not served. */
  async sessionToken(): Promise<string> {
    const user = privateKeyToAccount(generatePrivateKey())
    const res = await fetch(`${this.target.url()}/users/challenge`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ wallet: user.address }) })
    if (res.status !== 200) return 'conformance-session-token'
    const { challenge } = (await res.json()) as { challenge: string }
    const reg = await fetch(`${this.target.url()}/users/register-with-signature`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ wallet: user.address, challenge, signature: await user.signMessage({ message: challenge }) }),
    })
    if (reg.status !== 200) throw new Error(`login → ${reg.status}`)
    return ((await reg.json()) as { session_token: string }).session_token
  }

  forgetBearer(): void {
    this.#bearer = undefined
  }

  async preflight(company: string, headers?: Record<string, string>) {
    return this.call('GET', `/admin/cabinet/${company}/preflight`, undefined, headers ?? (await this.bearer()))
  }

  async ensureUnlocked(): Promise<void> {
    const pre = await this.preflight('CONFPROBE')
    if (pre.body?.vault_unlocked) return
    const r = await this.call('POST', '/vault/credentials/reunlock', await this.unlockProof(), await this.bearer())
    if (r.status !== 200) throw new Error(`reunlock → ${r.status} ${r.text}`)
  }

  async provision(company: string) {
    const c = await this.challenge('cabinet.provision', { company })
    return this.call('POST', `/admin/cabinet/${company}/provision`, { nonce: c.nonce, signature: c.signature }, await this.bearer())
  }

  async clear(company: string, options: { confirm?: string; boundCompany?: string } = {}) {
    const bound = options.boundCompany ?? company
    const c = await this.challenge('cabinet.clear', { company: bound, confirm: `DESTROY-${bound}-CABINET` })
    const confirm = options.confirm ?? `DESTROY-${company}-CABINET`
    return this.call('POST', `/admin/cabinet/${company}/clear`, { nonce: c.nonce, signature: c.signature, confirm }, await this.bearer())
  }

  async sign(agentId: string, message: string) {
    const c = await this.challenge('vault.sign', { agent_id: agentId, message_sha256: sha256(message) })
    return this.call('POST', `/vault/sign/${agentId.replaceAll('/', '%2F')}`, { nonce: c.nonce, signature: c.signature, message }, await this.bearer())
  }

  /** Submits a challenge to the endpoint of `endpointScope` (default: its own scope), with optional tampering. */
  async consume(c: { nonce: string; signature: string; scope: string; params: Record<string, string> }, options: { endpoint?: string; tamper?: string } = {}) {
    const scope = options.endpoint ?? c.scope
    const company = options.tamper === 'company' ? fresh('OTHER') : (c.params.company ?? fresh('CONF'))
    const agent = c.params.agent_id ?? `company:${company}:cabinet:ceo`
    const body = { nonce: c.nonce, signature: c.signature }
    switch (scope) {
      case 'auth':
        return this.call('POST', '/admin/shadow/verify', body)
      case 'provision':
      case 'cabinet.provision':
        return this.call('POST', `/admin/cabinet/${company}/provision`, body, await this.bearer())
      case 'cabinet.clear':
        return this.call('POST', `/admin/cabinet/${company}/clear`, { ...body, confirm: options.tamper === 'confirm' ? 'DESTROY' : c.params.confirm }, await this.bearer())
      case 'vault.sign':
        return this.call('POST', `/vault/sign/${agent}`, { ...body, message: options.tamper === 'message' ? 'another message' : 'conformance message' }, await this.bearer())
      case 'release.key':
        return this.call('POST', `/admin/shadow/release-key/${agent}`, { ...body, confirm: options.tamper === 'confirm' ? 'RELEASE' : 'RELEASE-PRIVATE-KEY' }, await this.bearer())
      default:
        throw new Error(`no endpoint for scope ${scope}`)
    }
  }

  async advance(seconds: number): Promise<boolean> {
    if (this.target.advance) {
      await this.target.advance(seconds)
      return true
    }
    if (!this.target.allowRealWait) return false
    await new Promise((r) => setTimeout(r, (seconds + 1) * 1000))
    return true
  }

  async restart(env?: Record<string, string>): Promise<void> {
    await this.target.restart!(env)
    this.#unlockMessage = undefined
  }
}

function headersObject(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {}
  headers.forEach((value, key) => {
    out[key] = value
  })
  return out
}

function check(problems: string[], label: string, res: Res | undefined, expect: Row['expect']): void {
  if (!expect || !res) return
  if (expect.status !== undefined && res.status !== expect.status) problems.push(`${label}: status ${res.status}, expected ${expect.status} (${res.text.slice(0, 200)})`)
  if (expect.error !== undefined && res.body?.error !== expect.error) problems.push(`${label}: error ${String(res.body?.error)}, expected ${expect.error}`)
  for (const [k, v] of Object.entries(expect.body ?? {})) {
    if (JSON.stringify(res.body?.[k]) !== JSON.stringify(v)) problems.push(`${label}: body.${k} = ${JSON.stringify(res.body?.[k])}, expected ${JSON.stringify(v)}`)
  }
}

const hookAvailable = (target: ShadowTarget, hook: Hook): boolean =>
  hook === 'login'
    ? target.servesLogin !== false
    : hook === 'clock' ? Boolean(target.advance || target.allowRealWait) : hook === 'restart' ? Boolean(target.restart) : hook === 'proof_file' ? Boolean(target.writeUnlockProof) : Boolean(target.setFault)

/** Replays one machine; one result per row, in order. */
export async function replayShadowMachine(target: ShadowTarget, machine: ShadowMachine, only?: string[]): Promise<RowResult[]> {
  const results: RowResult[] = []
  const r = new ShadowReplayer(target)
  const driver = drivers[machine.machine]
  if (!driver) throw new Error(`no driver for machine ${machine.machine}`)
  for (const row of machine.rows) {
    if (only && !only.includes(row.id)) continue
    const missing = (row.needs ?? []).filter((h) => !hookAvailable(target, h))
    if (missing.length > 0) {
      results.push({ id: row.id, ok: false, skipped: `target lacks hook(s): ${missing.join(', ')}`, problems: [] })
      continue
    }
    const problems: string[] = []
    const before = r.problems.length
    try {
      await driver(r, row, problems)
    } catch (error) {
      problems.push(`error: ${(error as Error).message}`)
    }
    problems.push(...r.problems.slice(before).map((p) => `document: ${p}`))
    results.push({ id: row.id, ok: problems.length === 0, problems })
  }
  return results
}

type Driver = (r: ShadowReplayer, row: Row, problems: string[]) => Promise<void>

// ── 3.1 nonce ──
const nonceDriver: Driver = async (r, row, problems) => {
  const d = row.do
  const company = fresh('CONF')
  const scope = (d.scope as string | undefined) ?? 'auth'
  let challenge: Awaited<ReturnType<ShadowReplayer['challenge']>> | undefined
  // reach `from`
  if (row.from !== 'none') {
    challenge = await r.challenge(scope, r.paramsFor(scope, company), d.signer === 'intruder' ? r.intruder : d.signer === 'high_s' ? 'high_s' : undefined)
    if (row.from === 'consumed') check(problems, 'reach consumed', await r.consume(challenge), { status: 200 })
    if (row.from === 'expired' && !(await r.advance(120))) throw new Error('no clock')
  }
  // event
  let res: Res | undefined
  if (row.restartEnv) await r.restart(row.restartEnv)
  try {
    if (d.action === 'issue') {
      const params = (d.params as Record<string, string> | undefined) ?? r.paramsFor(scope, company)
      res = await r.call('POST', '/admin/shadow/challenge', { scope, params })
      if (res.status === 200) {
        if (!/^0x[0-9a-f]{64}$/.test(res.body.nonce)) problems.push('nonce is not 0x + 64 hex')
        if (!String(res.body.message).startsWith(`svc-shadow-overlord/v1 scope=${scope}\nnonce: ${res.body.nonce}\n`)) problems.push('message layout')
        const sig = await r.target.overlord.signMessage({ message: res.body.message })
        challenge = { nonce: res.body.nonce, signature: sig, message: res.body.message, scope, params }
      }
    } else if (d.action === 'consume') {
      const c = d.nonce === 'unknown' ? { nonce: `0x${randomBytes(32).toString('hex')}`, signature: await r.target.overlord.signMessage({ message: 'x' }), scope, params: {} } : challenge!
      res = await r.consume(c, { endpoint: d.endpoint as string | undefined, tamper: d.tamper as string | undefined })
    } else if (d.action === 'wait') {
      if (!(await r.advance(d.seconds as number))) throw new Error('no clock')
    }
    check(problems, row.event, res, row.expect)
    // probe `to` (with a correctly signed copy for `issued`)
    if (challenge && row.to !== 'none') {
      const good = { ...challenge, signature: await r.target.overlord.signMessage({ message: challenge.message }) }
      const probe = await r.consume(good)
      const code = probe.body?.error as string | undefined
      if (row.to === 'issued' && code && CONSUME_REJECTIONS.has(code)) problems.push(`probe issued: a correct consume was rejected with ${code}`)
      if (row.to === 'consumed') check(problems, 'probe consumed', probe, { status: 409, error: 'nonce_consumed' })
      if (row.to === 'expired') check(problems, 'probe expired', probe, { status: 410, error: 'nonce_expired' })
    }
    if (row.to === 'none' && res?.body?.nonce) problems.push('probe none: a nonce was issued')
  } finally {
    if (row.restartEnv) await r.restart()
  }
}

// ── 3.2 bearer ──
const bearerDriver: Driver = async (r, row, problems) => {
  const d = row.do
  const company = fresh('CONF')
  r.forgetBearer()
  let bearer: { authorization: string } | undefined
  let roster: string | undefined
  if (row.from === 'valid') bearer = await r.bearer()
  let res: Res | undefined
  if (d.action === 'verify') {
    const c = await r.challenge('auth', {}, d.signer === 'intruder' ? r.intruder : undefined)
    res = await r.call('POST', '/admin/shadow/verify', { nonce: c.nonce, signature: c.signature })
    if (res.status === 200) {
      bearer = { authorization: `Bearer ${res.body.jwt}` }
      const claims = JSON.parse(Buffer.from(String(res.body.jwt).split('.')[1]!, 'base64url').toString())
      const header = JSON.parse(Buffer.from(String(res.body.jwt).split('.')[0]!, 'base64url').toString())
      if (header.alg !== 'HS256') problems.push(`alg ${header.alg}`)
      if (String(claims.sub).toLowerCase() !== r.target.overlord.address.toLowerCase()) problems.push('sub is not the overlord')
      if (claims.exp - claims.iat !== 300 || res.body.exp !== claims.exp) problems.push('lifetime is not 300 s')
    }
  } else if (d.action === 'preflight') {
    const headers: Record<string, string> =
      d.auth === 'session'
        ? { 'x-session-token': await r.sessionToken() }
        : d.auth === 'bogus_session'
          ? { 'x-session-token': `st_${'A'.repeat(43)}` }
        : d.auth === 'alg_none'
          ? { authorization: `Bearer ${unsecuredToken(r.target.overlord.address)}` }
          : {}
    res = await r.preflight(company, headers)
  } else if (d.action === 'provision') {
    res = await r.call('POST', `/admin/cabinet/${company}/provision`, {}, bearer)
  } else if (d.action === 'wait') {
    if (!(await r.advance(d.seconds as number))) throw new Error('no clock')
  } else if (d.action === 'restart') {
    await r.ensureUnlocked()
    check(problems, 'provision before rotation', await r.provision(company), { status: 200 })
    roster = (await r.call('GET', `/cabinet/${company}`)).text
    await r.restart(d.rotateSecret ? { SHADOW_JWT_SECRET: randomBytes(32).toString('hex') } : undefined)
  }
  check(problems, row.event, res, row.expect)
  // probe `to`
  if (row.to === 'valid') check(problems, 'probe valid', await r.preflight(company, bearer), { status: 200 })
  if (row.to === 'expired' || row.to === 'invalid') check(problems, `probe ${row.to}`, await r.preflight(company, bearer), { status: 401, error: 'bearer_invalid' })
  if (row.to === 'none') check(problems, 'probe none', await r.preflight(company, {}), { status: 401, error: 'bearer_required' })
  if (roster !== undefined && (await r.call('GET', `/cabinet/${company}`)).text !== roster) problems.push('cabinet contents changed across the secret rotation')
  if (row.id === '3.2-2') {
    // "a state-changing call still needs a fresh signature": with a fresh bearer, a consumed-less provision is refused.
    r.forgetBearer()
    check(problems, 'no signature', await r.call('POST', `/admin/cabinet/${company}/provision`, { nonce: `0x${'00'.repeat(32)}`, signature: `0x${'11'.repeat(65)}` }, await r.bearer()), { status: 404, error: 'nonce_not_found' })
  }
  if (row.restartEnv || d.action === 'restart') await r.restart()
  r.forgetBearer()
}

function unsecuredToken(sub: string): string {
  const now = Math.floor(Date.now() / 1000)
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url')
  return `${part({ alg: 'none', typ: 'JWT' })}.${part({ sub, scope: 'auth', iss: 'svc-shadow-overlord', aud: 'svc-shadow-admin', iat: now, exp: now + 300 })}.`
}

// ── 3.3 cabinet ──
async function probeCabinet(r: ShadowReplayer, company: string, state: string, problems: string[]) {
  const roster = await r.call('GET', `/cabinet/${company}`)
  const pre = await r.preflight(company)
  if (state === 'present') {
    check(problems, 'probe present: roster', roster, { status: 200 })
    if (roster.body?.members?.length !== 8) problems.push('probe present: roster does not have 8 members')
    if (roster.text.includes('vault_pk_id')) problems.push('probe present: roster carries vault_pk_id')
    check(problems, 'probe present: preflight', pre, { status: 200, body: { exists: true, soldiers_with_address: 7, members_total: 8 } })
  } else {
    check(problems, 'probe absent: roster', roster, { status: 404, error: 'cabinet_not_found' })
    check(problems, 'probe absent: preflight', pre, { status: 200, body: { exists: false, soldiers_with_address: 0 } })
  }
}

const cabinetDriver: Driver = async (r, row, problems) => {
  const d = row.do
  const company = fresh('CONF')
  await r.ensureUnlocked()
  let before: Res | undefined
  if (row.from === 'present') {
    check(problems, 'reach present', await r.provision(company), { status: 200, body: { created: true } })
    before = await r.call('GET', `/cabinet/${company}`)
  }
  let res: Res | undefined
  if (d.action === 'provision' && d.fault === 'every_step') {
    // Fail at step k = 0, 1, 2… until a provision completes: every step was a failure point once.
    let steps = 0
    for (let k = 0; k < 200; k++) {
      let i = 0
      r.target.setFault!(() => {
        if (i++ === k) throw new Error(`conformance fault at step ${k}`)
      })
      const attempt = await r.provision(company)
      r.target.setFault!(undefined)
      if (attempt.status === 200) {
        steps = k
        break
      }
      check(problems, `fault at step ${k}`, attempt, { ...row.expect, error: 'cabinet_operation_failed' })
      await probeCabinet(r, company, 'absent', problems)
    }
    if (steps !== 27) problems.push(`expected 27 provisioning steps (8 mints, 16 vault writes, registry, agent map, event), saw ${steps}`)
    check(problems, 'clean up', await r.clear(company), { status: 200 })
  } else if (d.action === 'provision') {
    res = await r.provision(company)
    if (res.status === 200 && before && res.body.ceo?.address !== before.body.members[0].address) problems.push('idempotent provision changed the roster')
  } else if (d.action === 'clear') {
    res = d.confirm === 'wrong' ? await r.clear(company, { confirm: `DESTROY-${company.toLowerCase()}-CABINET` }) : d.tamper === 'company' ? await r.clear(company, { boundCompany: fresh('OTHER') }) : await r.clear(company)
  }
  check(problems, row.event, res, row.expect)
  if (!(d.fault === 'every_step')) await probeCabinet(r, company, row.to, problems)
  if (row.to === 'present' && before) {
    const after = await r.call('GET', `/cabinet/${company}`)
    if (after.text !== before.text) problems.push('roster changed')
  }
}

// ── 3.4 vault lock ──
const vaultDriver: Driver = async (r, row, problems) => {
  const d = row.do
  await r.ensureUnlocked()
  const company = fresh('CONF')
  const provisioned = await r.provision(company)
  check(problems, 'fixture cabinet', provisioned, { status: 200 })
  const ceo = provisioned.body?.ceo as { entity_id: string; address: string }
  if (row.from === 'locked' && d.action !== 'restart') await r.restart()
  let res: Res | undefined
  if (d.action === 'restart') await r.restart()
  else if (d.action === 'reunlock_a') {
    await r.target.writeUnlockProof!(d.proof === 'absent' ? null : await r.unlockProof())
    res = await r.call('POST', '/vault/credentials/reunlock', undefined, await r.bearer())
    await r.target.writeUnlockProof!(null)
  } else if (d.action === 'reunlock_b') {
    res = await r.call('POST', '/vault/credentials/reunlock', await r.unlockProof(d.signer === 'intruder' ? r.intruder : undefined), await r.bearer())
  }
  check(problems, row.event, res, row.expect)
  const pre = await r.preflight(company)
  const signed = await r.sign(ceo.entity_id, 'vault probe')
  if (row.to === 'locked') {
    check(problems, 'probe locked: preflight', pre, { status: 200, body: { vault_unlocked: false } })
    check(problems, 'probe locked: sign', signed, { status: 423, error: 'vault_locked' })
  } else {
    check(problems, 'probe unlocked: preflight', pre, { status: 200, body: { vault_unlocked: true } })
    check(problems, 'probe unlocked: sign', signed, { status: 200 })
    if (signed.status === 200 && (await recoverMessageAddress({ message: 'vault probe', signature: signed.body.signature })) !== ceo.address) {
      problems.push('probe unlocked: signature does not recover to the member')
    }
  }
}

const drivers: Record<string, Driver> = {
  'shadow-nonce': nonceDriver,
  'shadow-bearer': bearerDriver,
  'shadow-cabinet': cabinetDriver,
  'shadow-vault-lock': vaultDriver,
}
