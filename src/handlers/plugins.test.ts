import { describe, expect, it } from 'vitest'
import type { OperationId } from '../../generated/gateway/operationIds.js'
import { initBatch } from './batch/index.js'
import { handlers } from './index.js'
import { coreOperationHandlers, domainPlugins, handlersOf, resolvePlugins } from './plugins.js'
import { shadowPlugin } from './shadow/plugin.js'
import { storagePlugin } from './storage/plugin.js'
import { initStorage } from './storage/index.js'

describe('domain plug-ins', () => {
  it('every operation of the document is the core’s or exactly one plug-in’s', () => {
    const owners = new Map<string, string[]>()
    for (const id of Object.keys(coreOperationHandlers)) owners.set(id, ['core'])
    for (const plugin of domainPlugins) for (const id of Object.keys(plugin.handlers)) owners.set(id, [...(owners.get(id) ?? []), plugin.name])
    expect([...owners.keys()].sort()).toEqual(Object.keys(handlers).sort())
    expect([...owners.entries()].filter(([, names]) => names.length > 1)).toEqual([])
  })

  it('maps the init… start hooks of an older domain list to their plug-ins', () => {
    expect(resolvePlugins([initStorage, initBatch]).map((p) => p.name)).toEqual(['storage', 'batch'])
    const custom = resolvePlugins([function custom() { return {} }])
    expect(custom[0]?.name).toMatch(/^custom/) // the function's name (the test transform may suffix it)
    expect(custom[0]?.handlers).toEqual({})
  })

  it('a plug-in not built contributes no handler: its operations get its refusal where the document declares that status', async () => {
    const map = handlersOf([storagePlugin], (id, status) => id === 'createShadowChallenge' && status === 503)
    expect(map.storeFile).toBe(storagePlugin.handlers.storeFile)
    expect(map.createShadowChallenge).not.toBe(shadowPlugin.handlers.createShadowChallenge)
    await expect(map.createShadowChallenge!({ params: {} } as never)).rejects.toMatchObject({ code: 'overlord_not_configured' })
    // the pages declare no 503: left to the router (501), never a handler reading a service that is not there
    expect(map.getShadowOverlordPage).toBeUndefined()
    // the boardroom page reads the shadow tier's cabinets: it is the shadow plug-in's, absent with it
    expect(map.getBoardroomPage).toBeUndefined()
    expect(map.getStoragePage).toBe(storagePlugin.handlers.getStoragePage)
    expect(map['getReceipt' satisfies OperationId]).toBeUndefined()
  })
})
