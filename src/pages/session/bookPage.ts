import { escapeHtml } from '../html.js'
import { sessionPage } from '../pages.js'
import { sessionStyle } from './clientScript.js'
import type { HandbookChapter } from './renderHandbook.js'

/**
 * `/book`: the operator handbook (README, docs/ and the parts' READMEs, rendered server-side by `renderHandbook`;
 * its images from `/doc/images/`), no script. Each
 * chapter is a closed `<details>` (the whole handbook open is too long to scroll on a phone); following a link
 * to a chapter opens it, as browsers expand a `<details>` holding the fragment's target.
 */
export function bookPage(wallet: string | undefined, chapters: HandbookChapter[]): string {
  const toc = chapters.map((c) => `<li><a href="#${escapeHtml(c.id)}">${escapeHtml(c.title)}</a></li>`).join('')
  const body = chapters
    .map((c) => `<details class="chapter"><summary>${escapeHtml(c.title)}</summary><div id="${escapeHtml(c.id)}">${c.html}<p><a href="#contents">Back to contents</a></p></div></details>`)
    .join('\n')
  const content = `${sessionStyle}
<style>.chapter{border-top:1px solid #2a303c;margin-top:12px;padding-top:8px;overflow-wrap:break-word}.chapter summary{cursor:pointer;font-size:1.1rem;font-weight:600;padding:6px 0}.chapter pre{overflow-x:auto;white-space:pre}.chapter table{display:block;overflow-x:auto}
.chapter p,.chapter li,.chapter h1,.chapter h2,.chapter h3{max-width:100ch}.chapter img{display:block;max-width:min(100%,1100px);height:auto;border:1px solid #2a303c;border-radius:6px;margin:8px 0}
.chapter a:not([href]){color:inherit;text-decoration:underline dotted}</style>
<nav aria-labelledby="contents"><h2 id="contents">Contents</h2><ol>${toc}</ol></nav>
${body}`
  return sessionPage('Operator handbook', wallet, content)
}
