/**
 * What a newcomer follows in the README and docs/: every relative link and anchor leads somewhere, and every
 * command shown exists (an npm script in package.json, a `pay2store` command of the CLI).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, normalize } from 'node:path'
import { describe, expect, it } from 'vitest'
import { buildProgram } from '../../src/cli/main.js'

const FILES = ['README.md', 'src/modelserver/README.md', ...readdirSync('docs').filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)]
const withoutCode = (text: string) => text.replace(/```[\s\S]*?```/g, '')
/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading: string) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N}_\- ]/gu, '').replace(/ /g, '-')
const anchorsOf = (file: string) => new Set(withoutCode(readFileSync(file, 'utf8')).split('\n').filter((l) => /^#{1,6} /.test(l)).map((l) => slug(l.replace(/^#+ /, ''))))

describe('README and docs', () => {
  it('every relative link leads to a file, and every anchor to a heading', () => {
    const broken: string[] = []
    for (const file of FILES) {
      for (const [, target] of withoutCode(readFileSync(file, 'utf8')).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^(https?|mailto):/.test(target!)) continue
        const [path, anchor] = target!.split('#') as [string, string | undefined]
        const resolved = path ? normalize(join(dirname(file), path)) : file
        if (!existsSync(resolved)) broken.push(`${file}: ${target}`)
        else if (anchor && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor)) broken.push(`${file}: ${target} (no such heading)`)
      }
    }
    expect(broken).toEqual([])
  })

  it('every command the README shows exists: npm scripts and pay2store commands', () => {
    const readme = readFileSync('README.md', 'utf8')
    const scripts = Object.keys((JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts)
    const npm = [...readme.matchAll(/npm (?:run ([\w:-]+)|(start|test)\b)/g)].map((m) => m[1] ?? m[2]!)
    expect(npm.length).toBeGreaterThan(5)
    for (const name of npm) expect(scripts, `npm ${name}`).toContain(name)
    const program = buildProgram()
    const shown = [...readme.matchAll(/npx pay2store ([a-z]+)(?: ([a-z|]+))?/g)]
    expect(shown.length).toBeGreaterThan(5)
    for (const [line, command, sub] of shown) {
      const c = program.commands.find((x) => x.name() === command)
      expect(c, line).toBeDefined()
      if (c!.commands.length > 0 && sub) for (const s of sub.split('|')) expect(c!.commands.map((x) => [x.name(), ...x.aliases()]).flat(), `${line}: ${s}`).toContain(s)
    }
  })
})
