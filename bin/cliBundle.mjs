/**
 * The CLI as one bundle (esbuild), built on first use and rebuilt when a source it was built from changed, so
 * a call costs only Node's start and the modules its command loads — no TypeScript compiled per run.
 *
 * The bundle lives in `node_modules/.cache/pay2store-cli/<tree>/<build>/` (`main.js` and the chunks the commands
 * load on demand; `<tree>` tells apart checkouts that share one node_modules); `current.json` names the build in
 * use and what it was built from: every file of the tree with
 * its modification time and size, and npm's record of the installed packages (`node_modules/.package-lock.json`,
 * rewritten by every install). A build is fresh while all of them are unchanged. Builds go to a new directory
 * and `current.json` is replaced atomically, so two first calls at once each run a whole build; a build no
 * longer named is removed an hour after it was replaced (a call that started with it may still load its chunks).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { join } from 'node:path'

const INSTALLED = 'node_modules/.package-lock.json'
const KEEP_OLD_BUILDS_MS = 60 * 60 * 1000

/** Packages with native parts: loaded from node_modules as installed, never bundled. */
const EXTERNAL = ['bufferutil', 'utf-8-validate']

const stamp = (root, file) => {
  const s = statSync(join(root, file))
  return [s.mtimeMs, s.size]
}

/** The bundle's entry if a build is in place and fresh, else undefined. */
export function freshBundle(root) {
  const cache = cacheDir(root)
  try {
    const current = JSON.parse(readFileSync(join(cache, 'current.json'), 'utf8'))
    for (const [file, [mtimeMs, size]] of Object.entries(current.inputs)) {
      const [m, s] = stamp(root, file)
      if (m !== mtimeMs || s !== size) return undefined
    }
    const entry = join(cache, current.build, 'main.js')
    return existsSync(entry) ? entry : undefined
  } catch {
    return undefined // no build yet, or an input is gone
  }
}

/** Builds the bundle from `src/cli/main.ts`; returns its entry. Throws when esbuild is missing or the build fails. */
export async function buildBundle(root) {
  const esbuild = await import('esbuild')
  const cache = cacheDir(root)
  const build = `build-${Date.now()}-${process.pid}`
  const outdir = join(cache, build)
  mkdirSync(outdir, { recursive: true })
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: { main: 'src/cli/main.ts' },
    outdir,
    bundle: true,
    splitting: true, // each command's modules in chunks of their own, loaded when it runs
    format: 'esm',
    platform: 'node',
    target: 'node22',
    external: EXTERNAL,
    metafile: true,
    logLevel: 'silent',
    // CommonJS packages inside an ES module bundle still call require()
    banner: { js: "import { createRequire as __pay2storeCreateRequire } from 'node:module'; const require = __pay2storeCreateRequire(import.meta.url);" },
  })
  const files = Object.keys(result.metafile.inputs).filter((f) => !f.startsWith('node_modules/'))
  if (existsSync(join(root, INSTALLED))) files.push(INSTALLED)
  const inputs = Object.fromEntries(files.map((f) => [f, stamp(root, f)]))
  markReplaced(cache)
  const tmp = join(cache, `current.json.${process.pid}.tmp`)
  writeFileSync(tmp, `${JSON.stringify({ build, inputs })}\n`)
  renameSync(tmp, join(cache, 'current.json'))
  removeOldBuilds(cache, build)
  return join(outdir, 'main.js')
}

function cacheDir(root) {
  const tree = createHash('sha256').update(root).digest('hex').slice(0, 12)
  return join(root, 'node_modules', '.cache', 'pay2store-cli', tree)
}

/** Dates the build `current.json` names now as replaced now: the hour before it is removed starts here. */
function markReplaced(cache) {
  try {
    const { build } = JSON.parse(readFileSync(join(cache, 'current.json'), 'utf8'))
    const now = new Date()
    utimesSync(join(cache, build), now, now)
  } catch {
    /* none yet */
  }
}

function removeOldBuilds(cache, keep) {
  for (const name of readdirSync(cache)) {
    if (name === keep || !name.startsWith('build-')) continue
    const dir = join(cache, name)
    try {
      if (Date.now() - statSync(dir).mtimeMs > KEEP_OLD_BUILDS_MS) rmSync(dir, { recursive: true, force: true })
    } catch {
      /* another call removed it */
    }
  }
}
