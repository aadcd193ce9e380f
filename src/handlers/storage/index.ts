export { storageHandlers } from './storageHandlers.js'
export { initStorage } from '../../services/domains/storageDomain.js'
