import { fileURLToPath } from 'node:url'
import { createAjv, loadOpenApiDocument } from '../../src/shared/http/index.js'

type Message = { name?: string; payload?: { allOf?: { properties?: { payload?: { $ref?: string } } }[] } }

const asyncapi = loadOpenApiDocument(fileURLToPath(new URL('../../asyncapi/events.yaml', import.meta.url))) as { components: { messages: Record<string, Message> } }
const ajv = createAjv()
ajv.addSchema({ $id: 'events.yaml', ...asyncapi })

/** The catalogue event kinds asyncapi/events.yaml documents (its messages' names, contract events left out). */
export const documentedEventKinds: string[] = Object.values(asyncapi.components.messages)
  .filter((m) => m.payload?.allOf?.some((part) => part.properties?.payload?.$ref))
  .map((m) => m.name!)

/**
 * Why `payload` is not what asyncapi/events.yaml declares for a catalogue event of `kind` (the schema its message
 * names), or undefined when it is. An undocumented kind is an error too.
 */
export function catalogueEventErrors(kind: string, payload: unknown): string | undefined {
  const message = Object.values(asyncapi.components.messages).find((m) => m.name === kind)
  const ref = message?.payload?.allOf?.map((part) => part.properties?.payload?.$ref).find((r) => r !== undefined)
  if (!ref) return `asyncapi/events.yaml documents no catalogue event ${kind}`
  const validate = ajv.getSchema(`events.yaml${ref}`)
  if (!validate) return `no schema ${ref}`
  return validate(payload) ? undefined : `${kind} ${JSON.stringify(payload)}: ${JSON.stringify(validate.errors)}`
}
