import { escapeHtml } from '../html.js'
import { sessionPage } from '../pages.js'
import { sessionStyle } from './clientScript.js'
import type { HandbookChapter } from './renderHandbook.js'

/** `/book`: the operator handbook (README and docs/, rendered server-side by `renderHandbook`), no script. */
export function bookPage(wallet: string | undefined, chapters: HandbookChapter[]): string {
  const toc = chapters.map((c) => `<li><a href="#${escapeHtml(c.id)}">${escapeHtml(c.title)}</a></li>`).join('')
  const body = chapters
    .map((c) => `<article id="${escapeHtml(c.id)}" class="chapter" aria-label="${escapeHtml(c.title)}">${c.html}<p><a href="#contents">Back to contents</a></p></article>`)
    .join('\n')
  const content = `${sessionStyle}
<style>.chapter{border-top:1px solid #2a303c;margin-top:24px;padding-top:8px;overflow-wrap:anywhere}.chapter pre{overflow-x:auto;white-space:pre}.chapter table{display:block;overflow-x:auto}</style>
<nav aria-labelledby="contents"><h2 id="contents">Contents</h2><ol>${toc}</ol></nav>
${body}`
  return sessionPage('Operator handbook', wallet, content)
}
