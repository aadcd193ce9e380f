export { ConfigError } from './ConfigError.js'
export * from './env.js'
export { type GatewayConfig, loadConfig, type ResponseValidationSetting } from './loadConfig.js'
