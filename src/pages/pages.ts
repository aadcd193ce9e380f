import { escapeHtml, page } from './html.js'

export function publicPage(): string {
  return page({
    title: 'Welcome',
    body: `<h1>Gateway</h1>
<section id="login-view" hidden><p>You are not signed in.</p><p><a href="/login?from=%2Fpublic"><button type="button">Sign in with your wallet</button></a></p></section>
<section id="welcome-view" hidden><p>Welcome back, <code id="wallet"></code>.</p><p><a href="/journal">Journal</a> · <a href="/insight/">Insight</a> · <a href="/docs">API docs</a></p></section>`,
    script: `
const token = localStorage.getItem('session_token');
const show = (id) => { document.getElementById(id).hidden = false; };
if (!token) show('login-view');
else fetch('/users/session/validate', { headers: { 'X-Session-Token': token } })
  .then((r) => r.ok ? r.json() : Promise.reject(r))
  .then((s) => { document.getElementById('wallet').textContent = s.wallet; show('welcome-view'); })
  .catch(() => { localStorage.removeItem('session_token'); show('login-view'); });
`,
  })
}

/**
 * A server-rendered page behind the session gate. `script` is the page's own inline script (it runs after
 * the shared logout wiring; one script tag, pinned by its CSP hash).
 */
export function sessionPage(title: string, wallet: string | undefined, content: string, script?: string): string {
  const logout = wallet
    ? `
document.getElementById('logout').addEventListener('click', async () => {
  const token = localStorage.getItem('session_token');
  await fetch('/users/logout', { method: 'POST', credentials: 'same-origin', headers: token ? { 'X-Session-Token': token } : {} });
  localStorage.removeItem('session_token');
  location.assign('/login');
});`
    : ''
  return page({
    title,
    body: `<h1>${escapeHtml(title)}</h1>
<p class="muted">${wallet ? `Signed in as <code>${escapeHtml(wallet)}</code>. <button id="logout" type="button">Log out</button>` : 'Open before the hard-gate rollout.'}</p>
${content}`,
    script: logout || script ? `${logout}\n${script ?? ''}` : undefined,
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
