// Preloaded (`node --import ./scripts/exitWithParent.mjs …`) into the servers `npm start` runs: when the
// parent's IPC channel closes — the parent exited or was killed outright — this process sends itself SIGTERM,
// so its own shutdown runs and nothing is left behind. The channel does not keep the process alive.
//
// Only for the process `npm start` marked (PAY2STORE_EXIT_WITH_PARENT=1): the marker is removed at once, so
// processes it forks with the same execArgv (node-llama-cpp's binary test child talks to its parent over
// IPC) are left alone.
if (process.env.PAY2STORE_EXIT_WITH_PARENT === '1') {
  delete process.env.PAY2STORE_EXIT_WITH_PARENT
  if (process.channel) {
    process.channel.unref()
    process.once('disconnect', () => {
      process.kill(process.pid, 'SIGTERM')
      setTimeout(() => process.exit(1), 5_000).unref()
    })
  }
}
