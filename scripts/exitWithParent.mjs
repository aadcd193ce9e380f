// Preloaded (`node --import ./scripts/exitWithParent.mjs …`) into the servers `npm start` runs: when the
// parent's IPC channel closes — the parent exited or was killed outright — this process sends itself SIGTERM,
// so its own shutdown runs and nothing is left behind. The channel does not keep the process alive.
if (process.channel) {
  process.channel.unref()
  process.once('disconnect', () => {
    process.kill(process.pid, 'SIGTERM')
    setTimeout(() => process.exit(1), 5_000).unref()
  })
}
