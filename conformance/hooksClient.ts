/**
 * The harness hooks of a deployment started with its test hooks port (`SERVICE_TEST_HOOKS=1`, src/testHooks/;
 * `npm start -- --test-hooks`), as the runner's `Hooks`: the clock, a restart with settings, flow A's proof file,
 * a failing cabinet step and a failing storage upstream, each one authenticated request to the hooks port.
 * `GET /` first says which hooks and which peers the deployment has; only those are offered to the runner.
 */
import type { Hooks } from './types.js'

/** The peer the `upstream` fault fails: the storage upstream's uploads (`POST /tx`). */
const UPLOAD_PEER = 'SERVICE_STORAGE__UPLOAD_URL'

export type HooksDescription = { hooks: string[]; peers: Record<string, { setting: string; target: string }> }

export class HooksClient {
  constructor(
    readonly url: string,
    private readonly token: string,
  ) {}

  async call(method: string, path: string, body?: unknown): Promise<unknown> {
    let res: Response
    try {
      res = await fetch(`${this.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(120_000),
      })
    } catch (error) {
      throw new Error(`hooks ${method} ${path}: no answer from ${this.url} (${(error as Error).message})`)
    }
    const text = await res.text()
    if (!res.ok) throw new Error(`hooks ${method} ${path} → ${res.status} ${text.slice(0, 300)}`)
    return text ? (JSON.parse(text) as unknown) : undefined
  }

  describe(): Promise<HooksDescription> {
    return this.call('GET', '/') as Promise<HooksDescription>
  }

  /** The runner's hooks this deployment offers. */
  async hooks(): Promise<Hooks> {
    const description = await this.describe()
    const has = (hook: string) => description.hooks.includes(hook)
    const hooks: Hooks = {}
    if (has('clock')) hooks.clock = async (seconds) => void (await this.call('POST', '/clock', { seconds }))
    if (has('restart')) hooks.restart = async (env) => void (await this.call('POST', '/restart', { env: env ?? {} }))
    if (has('proof_file')) hooks.proof_file = async (proof) => void (proof ? await this.call('PUT', '/proof-file', proof) : await this.call('DELETE', '/proof-file'))
    if (has('faults')) {
      hooks.faults = {
        cabinetStep: async (at) => void (at === undefined ? await this.call('DELETE', '/faults/cabinet-step') : await this.call('PUT', '/faults/cabinet-step', { at })),
      }
      if (Object.hasOwn(description.peers, UPLOAD_PEER)) {
        const peer = `/faults/peers/${encodeURIComponent(UPLOAD_PEER)}`
        hooks.faults.upstream = async (what) => void (what === 'fail' ? await this.call('PUT', peer, { status: 503, path: '/tx' }) : await this.call('DELETE', peer))
      }
    }
    return hooks
  }
}
