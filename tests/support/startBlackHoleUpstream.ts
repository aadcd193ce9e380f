import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * An upstream that takes an upload's bytes and never answers: the gateway sending to it stays mid-upload, so a
 * test can kill that gateway with the upload held (the take-over tests).
 */
export async function startBlackHoleUpstream(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((req) => req.resume())
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}
