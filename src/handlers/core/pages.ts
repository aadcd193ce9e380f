import { join } from 'node:path'
import { sanitizeFrom } from '../../gate/sanitizeFrom.js'
import { autocorePage, docIndexPage, docsHtmlPage, feedbackText, publicPage } from '../../pages/pages.js'
import { contentSecurityPolicy } from '../../pages/html.js'
import { loginPage } from '../../pages/loginPage.js'
import { swaggerPage, swaggerPageCsp } from '../../pages/swaggerPage.js'
import type { Handler } from '../types.js'
import { findRepoRoot } from '../../config/findRepoRoot.js'
import { boardroomPage } from '../../pages/session/boardroomPage.js'
import { bookPage } from '../../pages/session/bookPage.js'
import { coretermPage } from '../../pages/session/coretermPage.js'
import { dojoPage } from '../../pages/session/dojoPage.js'
import { feedbackPage } from '../../pages/session/feedbackPage.js'
import { insightPage } from '../../pages/session/insightPage.js'
import { journalPage } from '../../pages/session/journalPage.js'
import { registryPage } from '../../pages/session/registryPage.js'
import { type HandbookChapter, renderHandbook } from '../../pages/session/renderHandbook.js'
import { storagePage } from '../../pages/session/storagePage.js'

const html = (body: string) => ({
  status: 200,
  contentType: 'text/html; charset=utf-8',
  body,
  headers: { 'Cache-Control': 'no-store', 'Content-Security-Policy': contentSecurityPolicy(body), 'X-Content-Type-Options': 'nosniff' },
})

const wallet = (ctx: Parameters<Handler>[0]) => ctx.locals.session?.wallet

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
export const getDocs: Handler = (ctx) => {
  const body = swaggerPage(wallet(ctx))
  return { status: 200, contentType: 'text/html; charset=utf-8', body, headers: { 'Cache-Control': 'no-store', 'Content-Security-Policy': swaggerPageCsp(body), 'X-Content-Type-Options': 'nosniff' } }
}
export const getAutocorePage: Handler = () => html(autocorePage())

// The handbook's files do not change while the process runs: render them once, on first use.
let handbook: HandbookChapter[] | undefined

export const getFeedbackPage: Handler = (ctx) => html(feedbackPage(wallet(ctx)))
export const getJournalPage: Handler = (ctx) => html(journalPage(wallet(ctx)))
/**
 * /dojo offers only partners that can chat: the model server's models whose `/api/show` lists `completion`,
 * read per page load (a handful of local calls). Unknown (model server down) → `null`: the page then offers every model.
 */
export const getDojoPage: Handler = async (ctx) => {
  const chatModels = await ctx.services.modelServer.chatCapableModels(ctx.signal).catch(() => null)
  return html(dojoPage(wallet(ctx), chatModels))
}
/**
 * /boardroom offers the companies that have a cabinet, and says how a cabinet is had here: on the devnet `npm start`
 * provisioned one and the TEST overlord key is in devnet.json; elsewhere the operator provisions them.
 */
export const getBoardroomPage: Handler = async (ctx) => {
  const { shadow, config, overlordAddress } = ctx.services
  const companies = await shadow.cabinets.companies()
  const provisioning = !overlordAddress?.() ? ({ kind: 'none' } as const) : config.profile === 'devnet' ? ({ kind: 'devnet', devnetFile: join(config.dataDir, 'devnet.json') } as const) : ({ kind: 'operator' } as const)
  return html(boardroomPage({ wallet: wallet(ctx), companies, provisioning }))
}
export const getBookPage: Handler = (ctx) => html(bookPage(wallet(ctx), (handbook ??= renderHandbook(findRepoRoot()))))
export const getCoretermPage: Handler = (ctx) => html(coretermPage(wallet(ctx)))
export const getInsightPage: Handler = (ctx) => html(insightPage(wallet(ctx)))
export const getRegistryPage: Handler = (ctx) => html(registryPage(wallet(ctx)))
/** /storage/ links uploads to the configured Arweave gateway; with paid storage off it says so (and names no address). */
export const getStoragePage: Handler = (ctx) => {
  const { storage, rails } = ctx.services
  const arweaveGatewayUrl = storage.missingSettings().length === 0 ? storage.config.gatewayUrl : undefined
  return html(storagePage({ wallet: wallet(ctx), arweaveGatewayUrl, evmRails: rails.deferrable.map((r) => ({ network: r.id, label: r.label })) }))
}
export const getFeedbackText: Handler = () => ({ status: 200, contentType: 'text/plain; charset=utf-8', body: feedbackText })
