// Run first by `npm start` and `npm run batch` (the first import of their scripts) and before `npm run serve`,
// `npm run devnet` and `npm run modelserver` (their `pre` scripts): on a Node line package.json's `engines` does
// not name, the native modules built for another line crash the process without a word (better-sqlite3 on Node
// 20: exit 139). This says why, and what to do, instead.
import { readFileSync } from 'node:fs'

const { engines } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
const lines = [...engines.node.matchAll(/\^(\d+)/g)].map((m) => Number(m[1]))
const major = Number(process.versions.node.split('.')[0])
if (!lines.includes(major)) {
  console.error(
    `pay2store needs Node ${lines.join(', ')} (package.json "engines"); this is Node ${process.versions.node} (${process.execPath}).\n` +
      `Put a supported Node first on PATH — the one \`npm ci\` installed the modules with — e.g. \`nvm use 24\` (README, Prerequisites).`,
  )
  process.exit(1)
}
