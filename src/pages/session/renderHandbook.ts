import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, posix } from 'node:path'
import MarkdownIt from 'markdown-it'

type Renderer = InstanceType<typeof MarkdownIt>

export type HandbookChapter = { id: string; title: string; html: string }

/**
 * The handbook's chapters, in reading order: the README, the operator docs, then the READMEs of the parts the
 * README links to. Any other `docs/*.md` follows (so a new document is in the book without a change here).
 */
export const HANDBOOK_FILES = [
  'README.md',
  'docs/gateway-core.md',
  'docs/security.md',
  'docs/design.md',
  'docs/partners.md',
  'docs/conformance.md',
  'docs/performance.md',
  'docs/reliability.md',
  'devnet/README.md',
  'src/modelserver/README.md',
  'contracts/README.md',
]

/** Where the gateway serves `docs/images/` (under the public `/doc/` prefix; see `src/pipeline/publicAssets.ts`). */
export const HANDBOOK_IMAGES = '/doc/images'

/** `docs/x.md` → `doc-x` (the anchors the book always had), `README.md` → `doc-readme`, `devnet/README.md` → `doc-devnet-readme`. */
export const chapterId = (file: string) => `doc-${file.replace(/^docs\//, '').replace(/\.md$/i, '').toLowerCase().replace(/[^a-z0-9]+/g, '-')}`

/** The chapters' files as they exist under `root`: HANDBOOK_FILES in order, then the other `docs/*.md`. */
export function handbookFiles(root: string): string[] {
  let docs: string[] = []
  try {
    docs = readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)
  } catch {
    docs = []
  }
  return [...new Set([...HANDBOOK_FILES, ...docs])].filter((f) => existsSync(join(root, f)))
}

type Env = { file?: string; slugs?: Map<string, number> }

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens (a repeat gets `-1`, `-2`…). */
export function githubSlug(text: string): string {
  return text.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-')
}

/** A heading's id in the book: unique across chapters, so `#section` of one file cannot land in another. */
const headingId = (file: string, slug: string) => `${chapterId(file)}--${slug}`

const fileOf = (env: unknown) => ((env as Env | undefined)?.file ?? 'README.md')

/**
 * A repository-relative link or image source resolved against the file it is written in (`../README.md`
 * from `docs/` is `README.md`); `undefined` for an absolute URL, an in-page anchor or a path leaving the repository.
 */
function repoPath(href: string, file: string): { path: string; hash: string } | undefined {
  if (!href || /^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('#') || href.startsWith('/')) return undefined
  const [raw, hash = ''] = href.split('#', 2) as [string, string?]
  let decoded: string
  try {
    decoded = decodeURIComponent(raw)
  } catch {
    return undefined
  }
  const path = posix.normalize(posix.join(posix.dirname(file), decoded))
  if (path.startsWith('..')) return undefined
  return { path, hash: hash ? `#${hash}` : '' }
}

/**
 * Markdown → HTML with markdown-it: raw HTML in the source is escaped (`html: false`) and its link validator
 * drops `javascript:`/`vbscript:`/`data:` links. Three rules keep every link and image of the book working under
 * a strict CSP (images from this origin only): an image under `docs/images/` is served from `/doc/images/`
 * (others stay a text placeholder, nothing is fetched from elsewhere); a link to a chapter's file becomes an
 * in-page anchor to that chapter (or to its heading: headings carry GitHub's ids, prefixed by their chapter); a link to an API document goes to `/doc/…`; any other link into the
 * repository (which the gateway does not serve) stays text with the path in its title instead of a 404.
 * `md.render(text, { file })` resolves relative paths against `file` (default: the repository root).
 */
export function createHandbookRenderer(files: readonly string[] = HANDBOOK_FILES, images: ReadonlySet<string> | undefined = undefined): Renderer {
  const md = new MarkdownIt({ html: false, linkify: true })
  const chapters = new Map(files.map((f) => [f.toLowerCase(), chapterId(f)]))
  md.renderer.rules.image = (tokens, idx, _options, env) => {
    const token = tokens[idx]!
    const alt = md.utils.escapeHtml(token.content || 'image')
    const target = repoPath(String(token.attrGet('src') ?? ''), fileOf(env))
    const name = target && /^docs\/images\/([A-Za-z0-9_.-]+\.(?:png|jpe?g|gif|svg|webp))$/i.exec(target.path)?.[1]
    if (name && (!images || images.has(name))) return `<img src="${HANDBOOK_IMAGES}/${md.utils.escapeHtml(name)}" alt="${alt}" loading="lazy">`
    return `<span class="muted">[image: ${alt}]</span>`
  }
  // Headings get the ids GitHub gives them (prefixed by their chapter), so `#section` links keep working.
  md.renderer.rules.heading_open = (tokens, idx, options, env, self) => {
    const e = (env ?? {}) as Env
    const slugs = (e.slugs ??= new Map())
    const base = githubSlug(tokens[idx + 1]?.content ?? '')
    const n = slugs.get(base) ?? 0
    slugs.set(base, n + 1)
    tokens[idx]!.attrSet('id', headingId(fileOf(env), n ? `${base}-${n}` : base))
    return self.renderToken(tokens, idx, options)
  }
  const defaultLinkOpen = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options))
  md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
    const token = tokens[idx]!
    const href = String(token.attrGet('href') ?? '')
    const target = repoPath(href, fileOf(env))
    if (href.startsWith('#') && href.length > 1) token.attrSet('href', `#${headingId(fileOf(env), href.slice(1))}`)
    else if (target) {
      const chapter = chapters.get(target.path.toLowerCase())
      if (chapter) token.attrSet('href', target.hash ? `#${headingId(target.path, target.hash.slice(1))}` : `#${chapter}`)
      else if (/^(?:openapi|asyncapi)\/[A-Za-z0-9_.-]+\.(?:ya?ml|json)$/.test(target.path)) token.attrSet('href', `/doc/${target.path}`)
      else {
        token.attrs = (token.attrs ?? []).filter(([name]) => name !== 'href')
        token.attrSet('title', `${target.path} (in the repository; not part of the handbook)`)
      }
    }
    return defaultLinkOpen(tokens, idx, options, env, self)
  }
  return md
}

/** Reads and renders the handbook's chapters from the repository (`handbookFiles`). */
export function renderHandbook(root: string): HandbookChapter[] {
  const files = handbookFiles(root)
  let images: Set<string>
  try {
    images = new Set(readdirSync(join(root, 'docs/images')))
  } catch {
    images = new Set()
  }
  const md = createHandbookRenderer(files, images)
  return files.map((file) => {
    const text = readFileSync(join(root, file), 'utf8')
    const title = /^#\s+(.+)$/m.exec(text)?.[1]?.trim() ?? file
    return { id: chapterId(file), title, html: md.render(text, { file } satisfies Env) }
  })
}
