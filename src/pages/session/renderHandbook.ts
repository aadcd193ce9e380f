import { readFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import MarkdownIt from 'markdown-it'

type Renderer = InstanceType<typeof MarkdownIt>

export type HandbookChapter = { id: string; title: string; html: string }

/** The handbook's chapters, in reading order: the README, then the operator docs. */
export const HANDBOOK_FILES = ['README.md', 'docs/gateway-core.md', 'docs/security.md', 'docs/design.md', 'docs/partners.md', 'docs/conformance.md', 'docs/performance.md']

const chapterId = (file: string) => `doc-${basename(file, '.md').toLowerCase().replace(/[^a-z0-9]+/g, '-')}`

/**
 * Markdown → HTML with markdown-it: raw HTML in the source is escaped (`html: false`) and its link validator
 * drops `javascript:`/`vbscript:`/`data:` links. Two rules fit the page to a strict CSP with no request that can
 * fail: images become links to the image (none is loaded), and links to another handbook file become in-page
 * anchors to its chapter.
 */
export function createHandbookRenderer(): Renderer {
  const md = new MarkdownIt({ html: false, linkify: true })
  const chapters = new Map(HANDBOOK_FILES.map((f) => [basename(f).toLowerCase(), chapterId(f)]))
  md.renderer.rules.image = (tokens, idx) => {
    const token = tokens[idx]!
    const alt = md.utils.escapeHtml(token.content || 'image')
    return `<span class="muted">[image: ${alt}]</span>`
  }
  const defaultLinkOpen = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options))
  md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
    const token = tokens[idx]!
    const href = String(token.attrGet('href') ?? '')
    const local = /^(?:\.\/)?(?:docs\/)?([A-Za-z0-9_.-]+\.md)(#.*)?$/.exec(href)
    const chapter = local ? chapters.get(local[1]!.toLowerCase()) : undefined
    if (chapter) token.attrSet('href', `#${chapter}`)
    return defaultLinkOpen(tokens, idx, options, env, self)
  }
  return md
}

/** Reads and renders the handbook's chapters from the repository (a missing file is left out). */
export function renderHandbook(root: string, md: Renderer = createHandbookRenderer()): HandbookChapter[] {
  const chapters: HandbookChapter[] = []
  for (const file of HANDBOOK_FILES) {
    let text: string
    try {
      text = readFileSync(join(root, file), 'utf8')
    } catch {
      continue
    }
    const title = /^#\s+(.+)$/m.exec(text)?.[1]?.trim() ?? basename(file)
    chapters.push({ id: chapterId(file), title, html: md.render(text) })
  }
  return chapters
}
