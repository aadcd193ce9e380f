export { storageHandlers } from './storageHandlers.js'
export { initStorage } from '../../services/createServiceGraph.js'
