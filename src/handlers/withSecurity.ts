import type { DomainSetup } from './types.js'

/**
 * A domain of the service graph with the HTTP security schemes it answers: the graph builds the domain's
 * services and knows nothing of requests; the schemes (handlers over `ctx.services`) are added here.
 */
export function withSecurity<Core>(
  init: (core: Core) => DomainSetup | Promise<DomainSetup>,
  security: Pick<DomainSetup, 'securityHandlers' | 'unauthorized'>,
): (core: Core) => Promise<DomainSetup> {
  return async (core) => ({ ...(await init(core)), ...security })
}
