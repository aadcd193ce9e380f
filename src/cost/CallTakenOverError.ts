import { BaseError } from '../shared/errors/BaseError.js'

/**
 * A paid call's payment was taken over by another replica (`InterruptedCalls`): this instance's heartbeat was
 * silent past the lease (a process paused, not dead), so the call was billed for its last checkpoint there. The
 * instance that resumes settles nothing: one payment is billed once, by the replica that holds it.
 */
export class CallTakenOverError extends BaseError<'call_taken_over'> {
  override name = 'CallTakenOverError'
}
