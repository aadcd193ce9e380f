export { LoginError, type LoginErrorCode } from './LoginError.js'
export {
  hashToken,
  type LoginChallenge,
  LoginService,
  normalizeWallet,
  type Session,
  type ValidSession,
  type WalletPermissions,
} from './LoginService.js'
export { CostQuota, QuotaExceededError } from './CostQuota.js'
