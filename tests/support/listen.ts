import { once } from 'node:events'
import type { RequestListener, Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export type Listening = { url: string; close: () => Promise<void> }

/** Serves an Express app (or any request listener) on a free loopback port. */
export async function listen(app: RequestListener | { listen: (port: number, host: string) => Server }): Promise<Listening> {
  const server: Server = 'listen' in app ? app.listen(0, '127.0.0.1') : (await import('node:http')).createServer(app).listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
