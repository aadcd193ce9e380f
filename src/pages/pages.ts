import { escapeHtml, page } from './html.js'

/**
 * `/public`: the login view when this browser holds no (valid) session token, the signed-in home otherwise.
 * The navigation script validates the token and announces the result (`session:wallet` / `session:none`, or `session:unknown` when the server could not say: the token is kept).
 */
export function publicPage(): string {
  return page({
    title: 'Welcome',
    body: `<h1>Gateway</h1>
<p id="session-unknown" role="status" class="muted" hidden>Your session could not be checked just now (the server did not answer). <a href="/public">Try again</a>.</p>
<section id="login-view" aria-labelledby="login-view-title" hidden><h2 id="login-view-title">Sign in</h2><p>You are not signed in. Sign in with your browser wallet: you sign a message, no transaction is sent.</p><p><a id="public-signin" class="button" href="/login?from=%2Fpublic">Sign in with your wallet</a></p></section>
<section id="welcome-view" aria-labelledby="welcome-view-title" hidden><h2 id="welcome-view-title">Welcome back</h2><p>Signed in as <code id="wallet"></code>.</p>
<ul class="home-links">
<li><a href="/storage/">Storage</a>: pay and store files permanently on Arweave</li>
<li><a href="/dojo">Dojo</a>: chat with the marketplace agents and models</li>
<li><a href="/boardroom">Boardroom</a>: convene a company cabinet on a motion</li>
<li><a href="/journal">Journal</a>: your sign-ins, calls, uploads and payments</li>
<li><a href="/insight/">Insight</a>: the live event catalogue</li>
<li><a href="/registry/">Registry</a>: agents, models and capabilities</li>
</ul></section>`,
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

export function docsHtmlPage(): string {
  return page({
    title: 'Documentation',
    body: `<h1>Documentation</h1>
<ul>
<li><a href="/docs">Interactive API explorer</a> (sign-in required)</li>
<li><a href="/doc/">Documents index</a>: the OpenAPI and AsyncAPI documents</li>
</ul>`,
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
