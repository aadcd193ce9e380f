import { escapeHtml, page } from './html.js'
import { SITE_PAGES, type SitePage } from './sitePages.js'

const HOME_STYLE = `<style>
.lead{font-size:1.08rem;max-width:60em;line-height:1.5}
.site-pages{list-style:none;padding:0;margin:0;display:grid;gap:10px;grid-template-columns:repeat(auto-fill,minmax(min(100%,22em),1fr))}
.site-pages li{background:#161a21;border:1px solid #2a303c;border-radius:8px;padding:10px 12px}
.site-pages a{font-weight:600} .needs{font-size:.85rem;margin-left:6px;padding:1px 6px;border-radius:4px;background:#2a303c;white-space:nowrap}
.needs.open{background:#1f3a2a} .site-pages p{margin:6px 0 0}
</style>`

/** One page of the site as the home page lists it: its link, whether it needs a sign-in, what it does. */
const sitePageItem = (p: SitePage) =>
  `<li data-path="${escapeHtml(p.path)}" data-needs="${p.needs}"><a href="${escapeHtml(p.path)}">${escapeHtml(p.label)}</a>` +
  `<span class="needs${p.needs === 'nothing' ? ' open' : ''}">${p.needs === 'wallet' ? 'wallet sign-in' : 'open to everyone'}</span>` +
  `<p class="muted">${escapeHtml(p.what)}</p></li>`

/**
 * `/` and `/public`, the home page. Everyone reads what the product is and what each page does, with the pages that
 * need a wallet sign-in marked (the list is `SITE_PAGES`, the gate's rules). The navigation script validates a
 * stored session token and announces the result (`session:wallet` / `session:none`, or `session:unknown` when the
 * server could not say: the token is kept): signed out, the sign-in button shows; signed in, a welcome with the wallet.
 */
export function publicPage(): string {
  return page({
    title: 'Permanent storage paid from your wallet',
    body: `${HOME_STYLE}<h1>pay2store</h1>
<p class="lead">Store files permanently, paid from your wallet. Choose a file, sign one USDC payment in your wallet (x402: you sign, the service settles — there is no transaction for you to send) and the bytes go to Arweave for good. You get a receipt you can check against the stored bytes and, once the day's batch is committed on chain, a Merkle proof of it. Around it: AI agents and models to chat with, company cabinets of agent wallets that vote, and an API for your own programs.</p>
<p id="session-unknown" role="status" class="muted" hidden>Your session could not be checked just now (the server did not answer). <a href="/public">Try again</a>.</p>
<section id="login-view" aria-labelledby="login-view-title" hidden><h2 id="login-view-title">Sign in</h2><p>Most pages need a wallet sign-in. It costs nothing: your wallet signs a message (Sign-In with Ethereum); no transaction is sent.</p><p><a id="public-signin" class="button" href="/login?from=%2Fpublic">Sign in with your wallet</a></p></section>
<section id="welcome-view" aria-labelledby="welcome-view-title" hidden><h2 id="welcome-view-title">Welcome back</h2><p>Signed in as <code id="wallet"></code>.</p></section>
<section aria-labelledby="pages-title"><h2 id="pages-title">What you can do here</h2>
<ul class="site-pages" id="site-pages">
${SITE_PAGES.map(sitePageItem).join('\n')}
</ul>
<p class="muted">The API documents need no sign-in: generate a client from <a href="/doc/openapi/gateway.yaml"><code>/doc/openapi/gateway.yaml</code></a> (see <a href="/docs.html">API documents</a>). The interactive explorer and the handbook are for signed-in users, as the gateway's access rules have it.</p>
</section>`,
    script: `
document.addEventListener('session:wallet', (e) => { document.getElementById('wallet').textContent = e.detail.wallet; document.getElementById('welcome-view').hidden = false; document.getElementById('login-view').hidden = true; });
document.addEventListener('session:none', () => { document.getElementById('login-view').hidden = false; document.getElementById('welcome-view').hidden = true; });
document.addEventListener('session:unknown', () => { document.getElementById('session-unknown').hidden = false; });
`,
  })
}

/**
 * A server-rendered page behind the session gate: `wallet` is the session's (the navigation shows it; absent
 * only while the hard gate is off). `script` is the page's own inline script (pinned by its CSP hash).
 */
export function sessionPage(title: string, wallet: string | undefined, content: string, script?: string): string {
  return page({
    title,
    wallet,
    body: `<h1>${escapeHtml(title)}</h1>
${wallet ? '' : '<p class="muted">Open before the hard-gate rollout: sign in to use this page.</p>'}
${content}`,
    script,
  })
}

/**
 * `/docs.html`: the API documents, public (seed 000 §4.1: `/docs.html` and `/doc/` are in the public set), so a
 * partner reads them and generates a client without a wallet; the explorer `/docs` needs a sign-in.
 */
export function docsHtmlPage(): string {
  return page({
    title: 'API documents',
    body: `<h1>API documents</h1>
<p>The gateway is specified by these documents; no sign-in is needed to read them or to generate a client from them.</p>
<ul>
<li><a href="/doc/openapi/gateway.yaml">Gateway API</a> (OpenAPI 3.1): sign-in, paid storage, the model routes, the admin tier</li>
<li><a href="/doc/openapi/modelserver.yaml">Model server API</a> (OpenAPI 3.1, Ollama-compatible)</li>
<li><a href="/doc/asyncapi/events.yaml">Events</a> (AsyncAPI 3.0): the catalogue and contract events</li>
</ul>
<p>A typed client, for example: <code>npx @hey-api/openapi-ts -i &lt;this origin&gt;/doc/openapi/gateway.yaml -o client</code>.</p>
<p>Signed in, <a href="/docs">the API explorer</a> lets you try each operation with your session.</p>`,
  })
}

export function docIndexPage(documents: { name: string; href: string }[]): string {
  return page({
    title: 'Documents',
    body: `<h1>Documents</h1><ul>${documents.map((d) => `<li><a href="${escapeHtml(d.href)}">${escapeHtml(d.name)}</a></li>`).join('')}</ul>`,
  })
}

export function autocorePage(): string {
  return page({ title: 'Autocore', body: '<h1>Autocore</h1><p>Public agent workspace. Sign in to use the agents.</p>' })
}

export const feedbackText =
  'Feedback\n========\nTell us what works and what does not: signed in, use the form at /feedback.html (POST /feedback).\nEach message is kept as a feedback.submitted catalogue event, readable on /insight/.\n'
