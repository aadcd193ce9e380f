// Preloaded (`node --import ./scripts/reportListening.mjs …`) into the servers `npm start` runs: each port this
// process starts listening on is sent to the parent over IPC as `{ listening: <port> }`. `npm start` counts a
// server as up only once it reported its own port, not when something answers that port: a port taken between
// the start's checks and the server's bind (another process, a peer that picked a free port) would otherwise
// answer for a server that failed to bind.
//
// Only for the process `npm start` marked (PAY2STORE_REPORT_LISTENING=1): the marker is removed at once, so the
// processes it forks with the same execArgv say nothing.
import { tracingChannel } from 'node:diagnostics_channel'

if (process.env.PAY2STORE_REPORT_LISTENING === '1') {
  delete process.env.PAY2STORE_REPORT_LISTENING
  if (process.send) {
    tracingChannel('net.server.listen').subscribe({
      start() {},
      end() {},
      asyncStart() {},
      asyncEnd({ server }) {
        const address = server?.address()
        if (address && typeof address === 'object') process.send?.({ listening: address.port })
      },
      error() {},
    })
  }
}
