/**
 * Arweave ids are 43 base64url characters, and one in 64 begins with `-`: commander takes `receipt -jrxd…` for an
 * unknown option (exit 2). For the commands that take a storage id, such a token (never one of their options, which
 * are words after `--`) is moved behind a `--`, where commander reads only operands.
 */
const STORAGE_ID = /^-[A-Za-z0-9_-]{42}$/
const COMMANDS_WITH_ID = new Set(['receipt', 'verify'])

export function protectStorageIds(argv: readonly string[]): string[] {
  const command = argv.findIndex((a) => !a.startsWith('-'))
  if (command === -1 || !COMMANDS_WITH_ID.has(argv[command]!)) return [...argv]
  const end = argv.indexOf('--')
  const options = end === -1 ? argv : argv.slice(0, end)
  const ids = options.filter((a, i) => i > command && STORAGE_ID.test(a))
  if (ids.length === 0) return [...argv]
  const rest = options.filter((a, i) => !(i > command && STORAGE_ID.test(a)))
  return [...rest, '--', ...ids, ...(end === -1 ? [] : argv.slice(end + 1))]
}
