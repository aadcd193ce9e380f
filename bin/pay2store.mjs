#!/usr/bin/env node
// `npx pay2store …`: runs the compiled CLI when `npm run build` made it, else the TypeScript source
// through tsx (always present in a clone: `npm start` uses it).
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const built = join(root, 'dist', 'src', 'cli', 'main.js')
let cli
if (existsSync(built)) cli = await import(pathToFileURL(built).href)
else {
  const { tsImport } = await import('tsx/esm/api')
  cli = await tsImport(pathToFileURL(join(root, 'src', 'cli', 'main.ts')).href, import.meta.url)
}
process.exitCode = await cli.main(process.argv.slice(2))
