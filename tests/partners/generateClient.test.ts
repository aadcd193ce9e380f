/**
 * docs/partners.md, "With our generator": the command a partner copies generates a client from the gateway's
 * document, and the snippet beside it type-checks against that client — both read from the document, so neither
 * can drift from what works.
 */
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'

const run = promisify(execFile)
const root = join(import.meta.dirname, '..', '..')
let dir: string | undefined

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true })
})

/** The first fenced block of `lang` after `heading` in docs/partners.md. */
async function blockAfter(heading: string, lang: string): Promise<string> {
  const doc = await readFile(join(root, 'docs/partners.md'), 'utf8')
  const section = doc.slice(doc.indexOf(heading))
  const block = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(section)?.[1]
  if (!block) throw new Error(`docs/partners.md has no ${lang} block after "${heading}"`)
  return block
}

describe('docs/partners.md: a client from our generator', () => {
  it('the documented command generates a client, and the documented snippet type-checks against it', async () => {
    dir = await mkdtemp(join(tmpdir(), 'partner-client-'))
    await symlink(join(root, 'openapi'), join(dir, 'openapi'))
    // what a partner installs beside the client (zod, for the schemas) is in this project's dependencies
    await symlink(join(root, 'node_modules'), join(dir, 'node_modules'))
    const command = (await blockAfter('### With our generator', 'sh')).replace(/\\\n\s*/g, '').trim()
    const [npx, tool, ...args] = command.split(/\s+/)
    expect([npx, tool]).toEqual(['npx', '@hey-api/openapi-ts'])
    // the generator this project pins, as `npx` would find it installed
    await run(join(root, 'node_modules/.bin/openapi-ts'), args, { cwd: dir, timeout: 120_000 })
    const snippet = (await blockAfter('### With our generator', 'ts')).replace("'0x…'", "'0x0000000000000000000000000000000000000001'")
    await writeFile(join(dir, 'src/main.ts'), `${snippet}\nexport { data, error }\n`)
    await writeFile(
      join(dir, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', strict: true, noEmit: true, skipLibCheck: true, types: [] }, include: ['src'] }),
    )
    await writeFile(join(dir, 'package.json'), '{"type":"module"}')
    const tsc = await run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', dir], { cwd: dir, timeout: 120_000 }).catch((e: { stdout?: string }) => e)
    expect((tsc as { stdout?: string }).stdout ?? '').toBe('')
  }, 180_000)

  it("the example CI workflow sets up a Node line package.json's engines accepts (npm ci refuses any other)", async () => {
    const doc = await readFile(join(root, 'docs/partners.md'), 'utf8')
    const versions = [...doc.matchAll(/node-version: (\d+)/g)].map((m) => Number(m[1]))
    expect(versions.length).toBeGreaterThan(0)
    const engines = (JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node
    const lines = [...engines.matchAll(/\^(\d+)/g)].map((m) => Number(m[1]))
    for (const v of versions) expect(lines).toContain(v)
  })
})
