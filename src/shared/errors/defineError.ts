import { BaseError, type BaseErrorParameters, type ErrorAnswer } from './BaseError.js'

/** What a defined error's arguments become: its short message and, optionally, details, cause, meta and fields. */
export type ErrorParts<fields extends object = object> = {
  message: string
  details?: string | undefined
  cause?: unknown
  meta?: Record<string, unknown> | undefined
  /** How the HTTP layer answers it, when not with the plain error body. */
  answer?: ErrorAnswer | undefined
  /** Values kept on the error for the code that catches it (`error.maxBytes`), never rendered. */
  fields?: fields
}

/** A class made by `defineError`: `new Class(...args)` is a `BaseError<code>` carrying `fields`. */
export type DefinedError<code extends string, args extends unknown[], fields extends object> = {
  new (...args: args): BaseError<code> & Readonly<fields>
  readonly code: code
}

/**
 * One error class per code without a constructor to write: `name` (what logs and stack traces show), the stable
 * `code` the catalogue maps to a status, and how the arguments become the message. `instanceof` works as with
 * a written class, and a class may extend it.
 *
 *   export const UploadNotFoundError = defineError('UploadNotFoundError', 'upload_not_found', (id: string) => `no upload ${id}`)
 *   export type UploadNotFoundError = InstanceType<typeof UploadNotFoundError>
 */
export function defineError<const code extends string, args extends unknown[], fields extends object = object>(
  name: string,
  code: code,
  parts: (...args: args) => string | ErrorParts<fields>,
  options: Pick<BaseErrorParameters, 'docsPath' | 'stackless'> = {},
): DefinedError<code, args, fields> {
  const Defined = class extends BaseError<code> {
    static readonly code = code
    constructor(...args: args) {
      const made = parts(...args)
      const { message, fields, ...parameters } = typeof made === 'string' ? { message: made } : made
      super(code, message, { ...parameters, docsPath: options.docsPath, stackless: options.stackless })
      this.name = name
      if (fields) Object.assign(this, fields)
    }
  }
  Object.defineProperty(Defined, 'name', { value: name })
  return Defined as unknown as DefinedError<code, args, fields>
}
