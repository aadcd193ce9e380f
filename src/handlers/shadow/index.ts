import { initShadow as buildShadow } from '../../services/domains/shadowDomain.js'
import { withSecurity } from '../withSecurity.js'
import { shadowSecurity } from './shadowSecurity.js'

export { shadowHandlers } from './shadowHandlers.js'

/** The shadow domain of the service graph with its `overlordBearer` scheme. */
export const initShadow = withSecurity(buildShadow, shadowSecurity)
