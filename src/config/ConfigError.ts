import { BaseError } from '../shared/errors/BaseError.js'

/** A configuration value is missing or malformed. The message names the variable. */
export class ConfigError extends BaseError<'invalid_config'> {
  override name = 'ConfigError'
  readonly variable: string
  constructor(variable: string, problem: string) {
    super('invalid_config', `Invalid configuration: ${variable} ${problem}`)
    this.variable = variable
  }
}
