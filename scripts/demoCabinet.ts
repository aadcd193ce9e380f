/**
 * The devnet's demo cabinet: `npm start` provisions one company (`ACME`, what `/boardroom` offers first) when its
 * database has none yet, so the boardroom convenes out of the box.
 *
 * It takes the admin tier's real path, nothing shorter: a gateway of the same configuration in this process, on a
 * loopback port, before the real gateway starts; the overlord's signed `auth` challenge for a bearer; flow A's unlock
 * (the proof file `npm start` writes); a signed `cabinet.provision` challenge bound to the company. That gateway is
 * then closed, so the real one starts with its vault sealed, as after every start. Only the devnet's overlord (its
 * TEST key, in devnet.json) does this: with another `SHADOW_OVERLORD_ADDRESS` nothing happens.
 */
import type { AddressInfo } from 'node:net'
import type { Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { loadConfig } from '../src/config/loadConfig.js'
import { createDatabase } from '../src/db/createDatabase.js'

export type DemoCabinetOutcome = 'provisioned' | 'exists' | 'not the devnet overlord'

export async function seedDemoCabinet(p: { env: NodeJS.ProcessEnv; overlordKey: Hex; company?: string }): Promise<DemoCabinetOutcome> {
  const company = p.company ?? 'ACME'
  const overlord = privateKeyToAccount(p.overlordKey)
  if (p.env.SHADOW_OVERLORD_ADDRESS?.trim().toLowerCase() !== overlord.address.toLowerCase()) return 'not the devnet overlord'
  const config = { ...loadConfig(p.env), logLevel: 'silent' }
  const database = await createDatabase({ url: config.databaseUrl, sqliteSynchronous: config.sqliteSynchronous })
  try {
    const existing = await database.db.selectFrom('cabinet_registry').select('company').where('company', '=', company).executeTakeFirst()
    if (existing) return 'exists'
    // Loaded only when a cabinet is to be made: the whole gateway, which every later start does without.
    const [{ createApp }, { createGatewayServer }] = await Promise.all([import('../src/app.js'), import('../src/createGatewayServer.js')])
    const gateway = await createApp({ config, env: p.env, database })
    const server = createGatewayServer(gateway.app, config.http).listen(0, '127.0.0.1')
    try {
      await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject))
      await provision(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, overlord, company)
      return 'provisioned'
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
      await gateway.close()
    }
  } finally {
    await database.close()
  }
}

/** The overlord's calls: a bearer, the vault unlocked (flow A), the cabinet provisioned. Throws with the answer that failed. */
async function provision(base: string, overlord: ReturnType<typeof privateKeyToAccount>, company: string): Promise<void> {
  const call = async (path: string, body?: unknown, bearer?: string) => {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await res.text()
    if (!res.ok) throw new Error(`POST ${path} answered ${res.status}: ${text.slice(0, 300)}`)
    return JSON.parse(text) as Record<string, unknown>
  }
  const signed = async (scope: string, params?: Record<string, string>) => {
    const challenge = await call('/admin/shadow/challenge', params ? { scope, params } : { scope })
    return { nonce: challenge.nonce as string, signature: await overlord.signMessage({ message: challenge.message as string }) }
  }
  const { jwt } = (await call('/admin/shadow/verify', await signed('auth'))) as { jwt: string }
  await call('/vault/credentials/reunlock', undefined, jwt)
  await call(`/admin/cabinet/${encodeURIComponent(company)}/provision`, await signed('cabinet.provision', { company }), jwt)
}
