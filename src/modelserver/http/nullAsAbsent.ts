import type { OperationInfo, OperationStage } from '../../shared/http/index.js'
import { followLocalRefs as resolve, objectAt } from '../../shared/http/localRefs.js'

type Json = Record<string, unknown>

/**
 * Where an Ollama request may carry `null`: at each object, the members whose schema admits null and that are not
 * required (`drop`), the members to descend into (`members`) and, for an array, its items' plan.
 */
type NullPlan = { drop: Set<string>; members: Map<string, NullPlan>; items?: NullPlan }

/** Whether a schema admits `null`: `type` naming it, a `oneOf`/`anyOf` branch that does, or every `allOf` member. */
function admitsNull(document: Json, node: unknown): boolean {
  const schema = resolve(document, node)
  if (!schema) return false
  if (schema.type === 'null' || (Array.isArray(schema.type) && schema.type.includes('null'))) return true
  for (const key of ['oneOf', 'anyOf'] as const) {
    const branches = schema[key]
    if (Array.isArray(branches) && branches.some((b) => admitsNull(document, b))) return true
  }
  return Array.isArray(schema.allOf) && schema.allOf.length > 0 && schema.allOf.every((m) => admitsNull(document, m))
}

/** The schema and its `allOf` members (`parameters: {allOf: [ModelOptions]}`), each resolved. */
function partsOf(document: Json, node: unknown): Json[] {
  const schema = resolve(document, node)
  if (!schema) return []
  return [schema, ...(Array.isArray(schema.allOf) ? schema.allOf.flatMap((m) => partsOf(document, m)) : [])]
}

/**
 * The plan of a request schema, built once per schema object (a schema that contains itself gets the plan being
 * built). Only declared members are dropped: a map's keys (`files`, tool `arguments`) and a `format` schema's
 * contents are the client's data, where `null` means null.
 */
function planOf(document: Json, node: unknown, seen: Map<Json, NullPlan>): NullPlan | undefined {
  const schema = resolve(document, node)
  if (!schema) return undefined
  const known = seen.get(schema)
  if (known) return known
  const plan: NullPlan = { drop: new Set(), members: new Map() }
  seen.set(schema, plan)
  for (const part of partsOf(document, schema)) {
    const required = new Set(Array.isArray(part.required) ? (part.required as string[]) : [])
    for (const [name, member] of Object.entries(objectAt(part.properties) ?? {})) {
      if (!required.has(name) && admitsNull(document, member)) plan.drop.add(name)
      const inner = planOf(document, member, seen)
      if (inner && (inner.drop.size > 0 || inner.members.size > 0 || inner.items)) plan.members.set(name, inner)
    }
    const items = planOf(document, part.items, seen)
    if (items && (items.drop.size > 0 || items.members.size > 0)) plan.items = items
  }
  return plan
}

/** Removes, in place, the members the plan says a `null` of is an absent one. */
function dropNulls(value: unknown, plan: NullPlan): void {
  if (Array.isArray(value)) {
    if (plan.items) for (const item of value) dropNulls(item, plan.items)
    return
  }
  const object = objectAt(value)
  if (!object) return
  for (const name of plan.drop) if (Object.hasOwn(object, name) && object[name] === null) delete object[name]
  for (const [name, inner] of plan.members) if (Object.hasOwn(object, name)) dropNulls(object[name], inner)
}

/**
 * After validation: `null` in an optional member of an Ollama request is that member absent, as Go's
 * encoding/json reads it in Ollama (clients serialise unset fields as `null`: `{"format": null, "options": null}`).
 * The document says which members admit null; this stage removes them so handlers only ever see absence. A
 * required member (`model`) admits no null and stays a 400.
 */
export function nullAsAbsentStage<Locals extends Record<string, unknown>>(
  document: Json,
  operations: readonly OperationInfo[],
  applies: (operationId: string) => boolean,
): OperationStage<Locals> {
  const plans = new Map<string, NullPlan>()
  const seen = new Map<Json, NullPlan>()
  for (const o of operations) {
    if (!applies(o.operationId)) continue
    const content = objectAt(resolve(document, (o.definition as Json).requestBody)?.content)
    const plan = planOf(document, objectAt(content?.['application/json'])?.schema, seen)
    if (plan) plans.set(o.operationId, plan)
  }
  return (exchange) => {
    const context = exchange.context!
    const plan = plans.get(context.operationId)
    if (plan) dropNulls(context.body, plan)
    return undefined
  }
}

/** A request body as the handlers read it after `nullAsAbsentStage`: no member is `null`, at any depth. */
export type NullsDropped<T> = T extends readonly (infer U)[]
  ? NullsDropped<U>[]
  : T extends object
    ? { [K in keyof T]: NullsDropped<Exclude<T[K], null>> }
    : T
