/**
 * Driver `shadow`: the shadow-overlord machines (nonce.yaml, bearer.yaml, cabinet.yaml, vault.yaml — seed 000
 * §3.1–3.4), signing with the target's `overlord` key. Each row starts from fresh data: the driver reaches
 * `from`, performs the row's action (`do`), compares `expect`, then probes `to` (each state has a probe:
 * e.g. nonce `consumed` ⇒ a further consume answers 409; cabinet `present` ⇒ the public roster has 8
 * members and no `vault_pk_id`). Hooks: `clock`, `restart`, `proof_file`, `faults` (a failure at a cabinet
 * provisioning step), `login` (a live wallet session for the non-overlord rows).
 */
import { createHash } from 'node:crypto'
import { type Hex, recoverMessageAddress } from 'viem'
import type { PrivateKeyAccount } from 'viem/accounts'
import type { DocumentClient, Reply } from '../DocumentClient.js'
import type { Driver } from '../runner.js'
import type { SeededRandom } from '../SeededRandom.js'
import type { Hooks, Row as BaseRow, Target } from '../types.js'

type Do = { action: string; [k: string]: unknown }
type Row = BaseRow & { do: Do; restartEnv?: Record<string, string> }

type Res = Reply
const CONSUME_REJECTIONS = new Set(['nonce_not_found', 'nonce_expired', 'nonce_consumed', 'scope_mismatch', 'params_mismatch', 'bad_signature', 'confirm_mismatch', 'message_hash_mismatch'])
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
const sha256 = (s: string) => `0x${createHash('sha256').update(s, 'utf8').digest('hex')}`

function highS(signature: Hex): Hex {
  const s = BigInt(`0x${signature.slice(66, 130)}`)
  return `0x${signature.slice(2, 66)}${(N - s).toString(16).padStart(64, '0')}${signature.endsWith('1b') ? '1c' : '1b'}`
}

/** One machine's session against a target: the shadow-tier vocabulary over the document-checked client. */
class ShadowReplayer {
  readonly intruder: PrivateKeyAccount
  readonly overlord: PrivateKeyAccount
  readonly hooks: Hooks
  #bearer: { authorization: string } | undefined
  #unlockMessage: string | undefined

  constructor(
    readonly target: Target,
    readonly client: DocumentClient,
    readonly random: SeededRandom,
  ) {
    this.intruder = random.account()
    this.overlord = target.keys.overlord!
    this.hooks = target.hooks
  }

  fresh(prefix: string): string {
    return this.random.name(prefix)
  }

  /** HTTP call to the gateway; the client checks the response against the document. */
  async call(method: string, urlPath: string, body?: unknown, headers: Record<string, string> = {}): Promise<Res> {
    return this.client.call('gateway', method, urlPath, { json: body, headers })
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

  async unlockProof(signer: PrivateKeyAccount = this.overlord) {
    const message = await this.unlockMessage()
    return { address: this.overlord.address, signature: await signer.signMessage({ message }), message }
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

  async challenge(scope: string, params: Record<string, string>, signer: PrivateKeyAccount | 'high_s' = this.overlord) {
    const res = await this.call('POST', '/admin/shadow/challenge', Object.keys(params).length ? { scope, params } : { scope })
    if (res.status !== 200) throw new Error(`challenge ${scope} → ${res.status} ${res.text}`)
    const message = res.body.message as string
    const good = await this.overlord.signMessage({ message })
    const signature = signer === 'high_s' ? highS(good) : signer === this.overlord ? good : await signer.signMessage({ message })
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

  /** A live wallet session of a non-overlord user (seed §4.3); rows using it need the `login` hook. */
  async sessionToken(): Promise<string> {
    const user = this.random.account()
    const res = await this.call('POST', '/users/challenge', { wallet: user.address })
    if (res.status !== 200) throw new Error(`login challenge → ${res.status}`)
    const { challenge } = res.body as { challenge: string }
    const reg = await this.call('POST', '/users/register-with-signature', { wallet: user.address, challenge, signature: await user.signMessage({ message: challenge }) })
    if (reg.status !== 200) throw new Error(`login → ${reg.status}`)
    return (reg.body as { session_token: string }).session_token
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
    const company = options.tamper === 'company' ? this.fresh('OTHER') : (c.params.company ?? this.fresh('CONF'))
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
    if (!this.hooks.clock) return false
    await this.hooks.clock(seconds)
    return true
  }

  async restart(env?: Record<string, string>): Promise<void> {
    await this.hooks.restart!(env)
    this.#unlockMessage = undefined
  }
}

function check(problems: string[], label: string, res: Res | undefined, expect: Row['expect']): void {
  if (!expect || !res) return
  if (expect.status !== undefined && res.status !== expect.status) problems.push(`${label}: status ${res.status}, expected ${expect.status} (${res.text.slice(0, 200)})`)
  if (expect.error !== undefined && res.body?.error !== expect.error) problems.push(`${label}: error ${String(res.body?.error)}, expected ${expect.error}`)
  for (const [k, v] of Object.entries(expect.body ?? {})) {
    if (JSON.stringify(res.body?.[k]) !== JSON.stringify(v)) problems.push(`${label}: body.${k} = ${JSON.stringify(res.body?.[k])}, expected ${JSON.stringify(v)}`)
  }
}

type RowDriver = (r: ShadowReplayer, row: Row, problems: string[]) => Promise<void>

// ── 3.1 nonce ──
const nonceDriver: RowDriver = async (r, row, problems) => {
  const d = row.do
  const company = r.fresh('CONF')
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
        const sig = await r.overlord.signMessage({ message: res.body.message })
        challenge = { nonce: res.body.nonce, signature: sig, message: res.body.message, scope, params }
      }
    } else if (d.action === 'consume') {
      const c = d.nonce === 'unknown' ? { nonce: `0x${r.random.hex(32)}`, signature: await r.overlord.signMessage({ message: 'x' }), scope, params: {} } : challenge!
      res = await r.consume(c, { endpoint: d.endpoint as string | undefined, tamper: d.tamper as string | undefined })
    } else if (d.action === 'wait') {
      if (!(await r.advance(d.seconds as number))) throw new Error('no clock')
    }
    check(problems, row.event, res, row.expect)
    // probe `to` (with a correctly signed copy for `issued`)
    if (challenge && row.to !== 'none') {
      const good = { ...challenge, signature: await r.overlord.signMessage({ message: challenge.message }) }
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
const bearerDriver: RowDriver = async (r, row, problems) => {
  const d = row.do
  const company = r.fresh('CONF')
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
      if (String(claims.sub).toLowerCase() !== r.overlord.address.toLowerCase()) problems.push('sub is not the overlord')
      if (claims.exp - claims.iat !== 300 || res.body.exp !== claims.exp) problems.push('lifetime is not 300 s')
    }
  } else if (d.action === 'preflight') {
    const headers: Record<string, string> =
      d.auth === 'session'
        ? { 'x-session-token': await r.sessionToken() }
        : d.auth === 'bogus_session'
          ? { 'x-session-token': `st_${'A'.repeat(43)}` }
        : d.auth === 'alg_none'
          ? { authorization: `Bearer ${unsecuredToken(r.overlord.address)}` }
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
    await r.restart(d.rotateSecret ? { SHADOW_JWT_SECRET: r.random.hex(32) } : undefined)
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

const cabinetDriver: RowDriver = async (r, row, problems) => {
  const d = row.do
  const company = r.fresh('CONF')
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
      await r.hooks.faults!.cabinetStep!(k)
      const attempt = await r.provision(company)
      await r.hooks.faults!.cabinetStep!(undefined)
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
    res = d.confirm === 'wrong' ? await r.clear(company, { confirm: `DESTROY-${company.toLowerCase()}-CABINET` }) : d.tamper === 'company' ? await r.clear(company, { boundCompany: r.fresh('OTHER') }) : await r.clear(company)
  }
  check(problems, row.event, res, row.expect)
  if (!(d.fault === 'every_step')) await probeCabinet(r, company, row.to, problems)
  if (row.to === 'present' && before) {
    const after = await r.call('GET', `/cabinet/${company}`)
    if (after.text !== before.text) problems.push('roster changed')
  }
}

// ── 3.4 vault lock ──
const vaultDriver: RowDriver = async (r, row, problems) => {
  const d = row.do
  await r.ensureUnlocked()
  const company = r.fresh('CONF')
  const provisioned = await r.provision(company)
  check(problems, 'fixture cabinet', provisioned, { status: 200 })
  const ceo = provisioned.body?.ceo as { entity_id: string; address: string }
  if (row.from === 'locked' && d.action !== 'restart') await r.restart()
  let res: Res | undefined
  if (d.action === 'restart') await r.restart()
  else if (d.action === 'reunlock_a') {
    await r.hooks.proof_file!(d.proof === 'absent' ? null : await r.unlockProof())
    res = await r.call('POST', '/vault/credentials/reunlock', undefined, await r.bearer())
    await r.hooks.proof_file!(null)
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

const rowDrivers = new Map<string, RowDriver>([
  ['shadow-nonce', nonceDriver],
  ['shadow-bearer', bearerDriver],
  ['shadow-cabinet', cabinetDriver],
  ['shadow-vault-lock', vaultDriver],
])

export const shadowDriver: Driver = ({ machine, target, client, random }) => {
  const rowDriver = rowDrivers.get(machine.machine)
  if (!rowDriver) throw new Error(`driver shadow has no vocabulary for machine ${machine.machine}`)
  let replayer: ShadowReplayer | undefined
  return {
    missing: (row) => ((row as Row).do?.fault && !target.hooks.faults?.cabinetStep ? 'target lacks hook: faults (cabinet step)' : undefined),
    async run(row, _variant, problems) {
      replayer ??= new ShadowReplayer(target, client, random)
      await rowDriver(replayer, row as Row, problems)
    },
  }
}
