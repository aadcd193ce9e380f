/**
 * `promise`, or a rejection after `ms` — for outbound calls whose client takes no abort signal (algosdk): every
 * call that leaves the process is bounded. The call itself is not cancelled; its result is dropped.
 */
export function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms)
  })
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer))
}
