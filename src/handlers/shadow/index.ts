export { shadowHandlers } from './shadowHandlers.js'
export { shadowInit as initShadow } from './shadowInit.js'
export { shadowErrorRows } from './shadowErrorRows.js'
