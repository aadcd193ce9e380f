import { sanitizeFrom } from '../../gate/sanitizeFrom.js'
import { autocorePage, docIndexPage, docsHtmlPage, feedbackText, publicPage, sessionPage } from '../../pages/pages.js'
import { contentSecurityPolicy } from '../../pages/html.js'
import { loginPage } from '../../pages/loginPage.js'
import { swaggerPage } from '../../pages/swaggerPage.js'
import type { Handler } from '../types.js'

const html = (body: string) => ({
  status: 200,
  contentType: 'text/html; charset=utf-8',
  body,
  headers: { 'Cache-Control': 'no-store', 'Content-Security-Policy': contentSecurityPolicy(body), 'X-Content-Type-Options': 'nosniff' },
})

export const getLoginPage: Handler = (ctx) => html(loginPage(sanitizeFrom(ctx.query.from)))
export const getPublicPage: Handler = () => html(publicPage())
/** `/` is the landing page too: the login page returns there when `from` is missing or rejected. */
export const getRootPage: Handler = () => html(publicPage())
export const getDocsHtml: Handler = () => html(docsHtmlPage())
export const getDocIndex: Handler = () =>
  html(
    docIndexPage([
      { name: 'Gateway API (OpenAPI 3.1)', href: '/doc/openapi/gateway.yaml' },
      { name: 'Model server API (OpenAPI 3.1)', href: '/doc/openapi/modelserver.yaml' },
      { name: 'Events (AsyncAPI 3.0)', href: '/doc/asyncapi/events.yaml' },
    ]),
  )
// swagger-ui's bundle is not written for a strict CSP; the page loads only local scripts and has no inline one.
export const getDocs: Handler = () => ({ status: 200, contentType: 'text/html; charset=utf-8', body: swaggerPage(), headers: { 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' } })
export const getAutocorePage: Handler = () => html(autocorePage())

const gated =
  (title: string, content: string): Handler =>
  (ctx) =>
    html(sessionPage(title, ctx.locals.session?.wallet, content))

export const getFeedbackPage = gated('Feedback', '<p>Tell us what works and what does not: <a href="mailto:feedback@example.com">feedback@example.com</a>. Plain text: <a href="/feedback.txt">feedback.txt</a>.</p>')
export const getJournalPage = gated('Journal', '<p>Your journal of agent sessions.</p>')
export const getDojoPage = gated('Dojo', '<p>Practice prompts against the marketplace agents.</p>')
export const getBoardroomPage = gated('Boardroom', '<p>Convene a company cabinet on a motion (<code>POST /boardroom/convene</code>).</p>')
export const getBookPage = gated('Book', '<p>The operator handbook.</p>')
export const getCoretermPage = gated('Core terminal', '<p>The core terminal (formerly <code>/mindterm/</code>).</p>')
export const getInsightPage = gated('Insight', '<p>Recent catalogue events: <a href="/insight/catalogue/recent?h=true">/insight/catalogue/recent?h=true</a>.</p>')
export const getRegistryPage = gated('Registry', '<p>Registered agents: <a href="/agents">/agents</a>.</p>')
export const getStoragePage = gated('Storage', '<p>Paid permanent storage: <code>POST /store</code> (x402).</p>')
export const getFeedbackText: Handler = () => ({ status: 200, contentType: 'text/plain; charset=utf-8', body: feedbackText })
