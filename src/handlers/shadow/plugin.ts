import { ShadowError } from '../../overlord/ShadowError.js'
import { shadowErrorRows } from './errorRows.js'
import { getBoardroomPage } from '../core/pages.js'
import type { HttpPlugin } from '../HttpPlugin.js'
import { initShadow } from '../../services/domains/shadowDomain.js'
import { shadowHandlers } from './shadowHandlers.js'
import { shadowSecurity } from './shadowSecurity.js'

/** The shadow-overlord tier: challenges, bearer tokens, vault and cabinets, with its `overlordBearer` scheme. */
export const shadowPlugin = {
  name: 'shadow',
  beforeSessions: true,
  create: initShadow,
  security: shadowSecurity,
  // the boardroom page lists the companies with a cabinet
  handlers: { ...shadowHandlers, getBoardroomPage },
  errorRows: shadowErrorRows,
  notBuilt: { code: 'overlord_not_configured', error: () => new ShadowError('overlord_not_configured', 'The shadow-overlord tier is not part of this gateway.') },
} satisfies HttpPlugin
