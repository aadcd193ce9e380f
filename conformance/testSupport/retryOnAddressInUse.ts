/**
 * Runs `attempt` (which picks its own free ports) again when it failed because a port was taken: a free port is
 * found by binding port 0 and closing it, and until the server binds it, any process — an outgoing connection's
 * ephemeral port among them — may take it (seen in CI: Prism's `listen EADDRINUSE`). Other failures are thrown.
 */
export async function retryOnAddressInUse<T>(attempt: () => Promise<T>, tries = 3): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await attempt()
    } catch (error) {
      if (i >= tries || !/EADDRINUSE/.test(error instanceof Error ? error.message : String(error))) throw error
    }
  }
}
