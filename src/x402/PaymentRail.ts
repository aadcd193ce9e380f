import type { Rail } from './rails/Rail.js'

export type { RailOffer } from './rails/Rail.js'

/** A registered payment rail (see `rails/Rail.ts`): callers ask it, never which chain it is on. */
export type PaymentRail = Rail
