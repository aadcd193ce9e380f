export { shadowHandlers } from './shadowHandlers.js'
export { shadowInit } from './shadowInit.js'
export { shadowErrorRows } from './shadowErrorRows.js'
