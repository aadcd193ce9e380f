export { storageHandlers } from './storageHandlers.js'
export { storageInit as initStorage } from './storageInit.js'
export { storageErrorRows } from './storageErrorRows.js'
