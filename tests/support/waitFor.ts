/**
 * Polls `probe` every 250 ms until it returns a value; past `timeoutMs` fails naming `what` and, when given, the
 * state `describe` reports (what the test was waiting on, as it stood).
 */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number, describe?: () => Promise<unknown>): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${describe ? `: ${JSON.stringify(await describe())}` : ''}`)
    await new Promise((r) => setTimeout(r, 250))
  }
}
