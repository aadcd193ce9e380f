import type { OperationId } from '../../generated/gateway/operationIds.js'
import { toPlugin, type DomainEntry, type DomainPlugin } from '../services/DomainPlugin.js'
import { batchPlugin } from './batch/plugin.js'
import { initLlm } from './llm/index.js'
import { initShadow } from './shadow/index.js'
import { coreHandlers } from './core/index.js'
import { coreErrorRows, ErrorCatalogue } from './errorCatalogue.js'
import type { HttpPlugin } from './HttpPlugin.js'
import { llmPlugin } from './llm/plugin.js'
import { mcpCallOf, type McpToolContributor } from './mcp/index.js'
import { shadowPlugin } from './shadow/plugin.js'
import { storagePlugin } from './storage/plugin.js'
import type { Handler } from './types.js'
import { x402Handlers } from './x402/index.js'

/**
 * The gateway's domain plug-ins, in the order the service graph builds them (started in this order, drained
 * and closed in reverse). The one list: the graph's domains and the handler map both come from it.
 */
export const domainPlugins: readonly HttpPlugin[] = [shadowPlugin, storagePlugin, batchPlugin, llmPlugin]

// the core's folder also holds pages and routes of domains: those are the domains' plug-ins' operations
const { getBoardroomPage: _boardroom, getStoragePage: _storagePage, listMyUploads: _uploads, ...coreOnly } = coreHandlers

/** The MCP tools of `plugins`, each plug-in's over the request (the MCP endpoint serves those of the built ones). */
export function mcpToolsOf(plugins: readonly HttpPlugin[]): McpToolContributor[] {
  return plugins.flatMap((plugin) => (plugin.mcpTools ? [plugin.mcpTools] : []))
}

/**
 * The operations of the core services (sign-in, pages, marketplace, activity, MCP, batch-settlement): always
 * built. `POST /mcp` here serves every listed plug-in's tools; an app's map (`handlersOf`) serves its built ones'.
 */
export const coreOperationHandlers = { ...coreOnly, mcpCall: mcpCallOf(mcpToolsOf(domainPlugins)), ...x402Handlers } satisfies Partial<Record<OperationId, Handler>>

/**
 * The plug-ins of an app's domain list: a plug-in as given; a bare start hook that is a listed plug-in's
 * `create` (the `init…` exports) as that plug-in; any other hook as a plug-in without operations.
 */
export function resolvePlugins(entries: readonly DomainEntry[]): HttpPlugin[] {
  const byInit = new Map<DomainEntry, HttpPlugin>([...domainPlugins.map((plugin) => [plugin.create, plugin] as const), [initShadow, shadowPlugin], [initLlm, llmPlugin]])
  return entries.map((entry) => {
    if (typeof entry !== 'function') return isHttpPlugin(entry) ? entry : { ...entry, handlers: {}, errorRows: {} }
    return byInit.get(entry) ?? { ...toPlugin(entry), handlers: {}, errorRows: {} }
  })
}

function isHttpPlugin(plugin: DomainPlugin): plugin is HttpPlugin {
  return 'handlers' in plugin && 'errorRows' in plugin
}

/**
 * The error catalogue of an app built from `built`: the core's rows, every listed plug-in's (a plug-in left out
 * still refuses with its own code, `notBuilt`, and a code another domain shares keeps its status) and each built
 * plug-in's — a plug-in given in place of a listed one brings its rows too.
 */
export function catalogueOf(built: readonly HttpPlugin[]): ErrorCatalogue {
  const plugins = [...new Set([...domainPlugins, ...built])]
  return ErrorCatalogue.compose([{ name: 'core', errorRows: coreErrorRows }, ...plugins])
}

/** The catalogue of the listed plug-ins (an app built with the default list has this one). */
export const gatewayCatalogue = catalogueOf([])

/** Which statuses each operation declares (a refusal must be one of them, or response validation fails it). */
export type DeclaresStatus = (operationId: string, status: number) => boolean

/**
 * The handler map of an app built from `built`: the core's operations, each built plug-in's, and for each
 * listed plug-in that is not built its `notBuilt` refusal on the operations that declare its status (the rest
 * are left to the router's 501 `not_implemented`).
 */
export function handlersOf(built: readonly HttpPlugin[], declares: DeclaresStatus): Partial<Record<string, Handler>> {
  const map = new Map<string, Handler>(Object.entries(coreOperationHandlers))
  const catalogue = catalogueOf(built)
  map.set('mcpCall', mcpCallOf(mcpToolsOf(built)))
  for (const plugin of domainPlugins) {
    if (built.includes(plugin) || !plugin.notBuilt) continue
    const { code, error } = plugin.notBuilt
    const status = catalogue.statusOfCode(code)
    for (const operationId of Object.keys(plugin.handlers)) {
      if (status !== undefined && declares(operationId, status)) map.set(operationId, (ctx) => Promise.reject(error(ctx)))
    }
  }
  for (const plugin of built) for (const [operationId, handler] of Object.entries(plugin.handlers)) if (handler) map.set(operationId, handler)
  return Object.fromEntries(map)
}

/** `DeclaresStatus` read from an OpenAPI document's `paths`. */
export function declaredStatuses(document: Record<string, unknown>): DeclaresStatus {
  const declared = new Map<string, Set<number>>()
  const paths = (document.paths ?? {}) as Record<string, Record<string, { operationId?: string; responses?: Record<string, unknown> } | undefined>>
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item ?? {})) {
      if (typeof operation !== 'object' || !operation?.operationId) continue
      declared.set(operation.operationId, new Set(Object.keys(operation.responses ?? {}).map(Number)))
    }
  }
  return (operationId, status) => declared.get(operationId)?.has(status) ?? false
}
