export { storageHandlers } from './storageHandlers.js'
export { storageInit, storageInit as initStorage } from './storageInit.js'
export { storageErrorRows } from './storageErrorRows.js'
