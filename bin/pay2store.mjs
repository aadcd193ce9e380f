#!/usr/bin/env node
// `npx pay2store …`: runs the CLI from its bundle (bin/cliBundle.mjs: built on first use, rebuilt when a source
// changed). Where no bundle can be made (esbuild absent, node_modules read-only), the compiled CLI of
// `npm run build`, else the TypeScript source through tsx.
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { buildBundle, freshBundle } from './cliBundle.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')

async function load() {
  const bundle = freshBundle(root) ?? (await buildBundle(root).catch(() => undefined))
  if (bundle) return import(pathToFileURL(bundle).href)
  const built = join(root, 'dist', 'src', 'cli', 'main.js')
  if (existsSync(built)) return import(pathToFileURL(built).href)
  const { tsImport } = await import('tsx/esm/api')
  return tsImport(pathToFileURL(join(root, 'src', 'cli', 'main.ts')).href, import.meta.url)
}

const cli = await load()
process.exitCode = await cli.main(process.argv.slice(2))
