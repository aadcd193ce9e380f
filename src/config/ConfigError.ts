import { defineError } from '../shared/errors/defineError.js'

/** A configuration value is missing or malformed. The message names the variable. */
export const ConfigError = defineError('ConfigError', 'invalid_config', (variable: string, problem: string) => ({
  message: `Invalid configuration: ${variable} ${problem}`,
  fields: { variable },
}))
export type ConfigError = InstanceType<typeof ConfigError>
