import type { DomainInit, DomainSetup, EarlyDomainInit } from './types.js'

/**
 * A domain as a plug-in: its name and what it builds from the core services (`create`: its services, metrics,
 * start/drain/close, and — on the HTTP side — the security schemes it answers). The service graph builds the
 * plug-ins of one list, in its order, once; the HTTP side adds each plug-in's handlers
 * (`src/handlers/plugins.ts`), so a domain that is not built contributes no handler.
 */
export type DomainPlugin = EarlyDomainPlugin | LateDomainPlugin

/** The security schemes a domain answers (added by the HTTP side's plug-in; the graph hands them on in its setup). */
export type DomainSecurity = Pick<DomainSetup, 'securityHandlers' | 'unauthorized'>

/**
 * A domain whose services the sessions or the agent registry read (`overlordAddress`, `cabinetRoster`): built
 * before them, so it receives the core without the marketplace, and they receive its services as built.
 */
export type EarlyDomainPlugin = {
  /** Names the domain in logs and in the list (`shadow`, `storage`, …). */
  readonly name: string
  readonly beforeSessions: true
  /** Builds the domain from the core services; throw a `ConfigError` for bad configuration. */
  readonly create: EarlyDomainInit
  readonly security?: DomainSecurity | undefined
}

/** A domain built after the sessions and the agent registry (it may use the marketplace). */
export type LateDomainPlugin = {
  readonly name: string
  readonly beforeSessions?: false | undefined
  readonly create: DomainInit
  readonly security?: DomainSecurity | undefined
}

export function isEarly(plugin: DomainPlugin): plugin is EarlyDomainPlugin {
  return plugin.beforeSessions === true
}

/** A plug-in, or a bare start hook (tests): a bare hook becomes a plug-in named after its function. */
export type DomainEntry = DomainPlugin | DomainInit

export function toPlugin(entry: DomainEntry): DomainPlugin {
  return typeof entry === 'function' ? { name: entry.name || 'domain', create: entry } : entry
}

export type { DomainInit, DomainSetup, EarlyDomainInit }
