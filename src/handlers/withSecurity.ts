import type { DomainSetup } from './types.js'

/**
 * A start hook with the security schemes its domain answers, for domain lists of bare hooks (the plug-ins carry
 * theirs in `security`, ./HttpPlugin.ts): the graph builds the domain's services and knows nothing of requests.
 */
export function withSecurity<Core>(
  init: (core: Core) => DomainSetup | Promise<DomainSetup>,
  security: Pick<DomainSetup, 'securityHandlers' | 'unauthorized'>,
): (core: Core) => Promise<DomainSetup> {
  return async (core) => ({ ...(await init(core)), ...security })
}
