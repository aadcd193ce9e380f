/**
 * The eight cabinet members, fixed order (seed 000 §2.4; the three soldier ids the seed leaves open are
 * decided in docs/design.md): the chief executive first, then seven soldiers. `boardroom_weight` is an
 * integer percent: ceo 30, each soldier 10 (sums to 100).
 */
export const CABINET_MEMBERS = [
  { role: 'ceo', label: 'Chief Executive Officer', boardroom_weight: 30 },
  { role: 'coo_operations', label: 'Chief Operating Officer', boardroom_weight: 10 },
  { role: 'cfo_finance', label: 'Chief Financial Officer', boardroom_weight: 10 },
  { role: 'cto_technology', label: 'Chief Technology Officer', boardroom_weight: 10 },
  { role: 'ciso_security', label: 'Chief Information Security Officer', boardroom_weight: 10 },
  { role: 'clo_legal', label: 'Chief Legal Officer', boardroom_weight: 10 },
  { role: 'cpo_product', label: 'Chief Product Officer', boardroom_weight: 10 },
  { role: 'cro_risk', label: 'Chief Risk Officer', boardroom_weight: 10 },
] as const

export type CabinetRole = (typeof CABINET_MEMBERS)[number]['role']

export const SOLDIER_ROLES: readonly CabinetRole[] = CABINET_MEMBERS.filter((m) => m.role !== 'ceo').map((m) => m.role)

export function agentIdFor(company: string, role: string): string {
  return `company:${company}:cabinet:${role}`
}

export function pkEntryId(agentId: string): string {
  return `${agentId}:pk`
}

export function addressEntryId(agentId: string): string {
  return `${agentId}:address`
}

export const PUBLIC_ADDRESS_CONTEXT = 'cabinet_public'
export const PRIVATE_KEY_CONTEXT = 'cabinet_private_key'

/** Parses `company:<CO>:cabinet:<role>`; undefined when the id is not a cabinet member id. */
export function parseCabinetAgentId(agentId: string): { company: string; role: CabinetRole } | undefined {
  const match = /^company:([A-Za-z0-9][A-Za-z0-9_-]{0,63}):cabinet:([a-z_]+)$/.exec(agentId)
  if (!match) return undefined
  const role = CABINET_MEMBERS.find((m) => m.role === match[2])?.role
  return role ? { company: match[1]!, role } : undefined
}
