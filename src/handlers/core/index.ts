import type { Handler } from '../types.js'
import * as activity from './activity.js'
import * as integration from './integration.js'
import * as login from './login.js'
import * as marketplace from './marketplace.js'
import * as pages from './pages.js'

/** Handlers of the gateway core. */
export const coreHandlers = {
  ...login,
  ...pages,
  ...integration,
  ...marketplace,
  ...activity,
} satisfies Record<string, Handler>
