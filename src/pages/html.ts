import { createHash } from 'node:crypto'
import { SITE_PAGES } from './sitePages.js'

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)
}

/** A value embedded in an inline script: JSON with `<` escaped, so `</script>` can never close the tag. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029')
}

/** Shared by every page shell (also /cabinet's): the navigation's own rules. */
export const NAV_STYLE = `
  .site-nav{padding:10px 16px;background:#181b22;display:flex;flex-wrap:wrap;gap:6px 14px;align-items:center}
  .site-nav a{color:#9ecbff;text-decoration:none;padding:4px 2px}
  .site-nav a:hover,.site-nav a:focus-visible{text-decoration:underline}
  .site-nav .brand{font-weight:700;color:#e6e6e6}
  .site-nav .session{margin-left:auto;display:flex;gap:10px;align-items:center}
  .site-nav button{padding:4px 10px;margin:0}
  :focus-visible{outline:2px solid #ffd166;outline-offset:2px}
  [hidden]{display:none !important}
`

const style = `
  body{font-family:system-ui,sans-serif;margin:0;background:#0f1115;color:#e6e6e6}
  main{padding:20px clamp(14px,3vw,40px) 40px;max-width:1600px;box-sizing:border-box;overflow-wrap:break-word}
  h1{margin:.3em 0 .5em}
  a{color:#9ecbff}
  button{padding:8px 14px;border-radius:6px;border:1px solid #3a3f4b;background:#2b6cb0;color:#fff;cursor:pointer;font:inherit}
  a.button{display:inline-block;padding:8px 14px;border-radius:6px;background:#2b6cb0;color:#fff;text-decoration:none}
  fieldset{border:1px solid #3a3f4b;border-radius:6px;margin:12px 0}
  .wallet-list label{display:flex;gap:8px;align-items:center;padding:6px 0;cursor:pointer}
  code,pre{background:#181b22;padding:2px 6px;border-radius:4px} .muted{color:#9aa3b2} .error{color:#ff8a8a}
  ${NAV_STYLE}
`

/** The navigation: every page that needs a sign-in (the public ones are linked from the home page). */
const NAV_LINKS: [string, string][] = SITE_PAGES.filter((p) => p.needs === 'wallet').map((p) => [p.path, p.label])

const shortWallet = (wallet: string) => (wallet.length > 14 ? `${wallet.slice(0, 6)}…${wallet.slice(-4)}` : wallet)

/**
 * The shared navigation. `wallet` is the signed-in wallet when the server knows it (gated pages); otherwise the
 * navigation script asks `/users/session/validate` with the token the login page stored and fills it in.
 * Signed in: the wallet and "Log out" show and "Login" hides.
 */
export function navHtml(wallet?: string): string {
  const links = NAV_LINKS.map(([href, label]) => `<a href="${href}">${label}</a>`).join('')
  return `<header><nav class="site-nav" aria-label="Main"><a class="brand" href="/public">pay2store</a>${links}<span class="session"><a id="nav-login" href="/login"${wallet ? ' hidden' : ''}>Login</a><span id="nav-wallet"${wallet ? '' : ' hidden'}>Signed in as <code id="nav-wallet-address" title="${wallet ? escapeHtml(wallet) : ''}" data-wallet="${wallet ? escapeHtml(wallet) : ''}">${wallet ? escapeHtml(shortWallet(wallet)) : ''}</code></span><button id="nav-logout" type="button"${wallet ? '' : ' hidden'}>Log out</button></span></nav></header>`
}

/**
 * The navigation's script (identical on every page, so one CSP hash): the login link returns to this page,
 * a stored token that is still valid shows its wallet, and "Log out" revokes the session (`POST /users/logout`,
 * no body — so no content type), forgets the token and goes to the login page. A token the server answers 401
 * for is forgotten; any other failure (network, 5xx, a request cut off by leaving the page) keeps it.
 */
export const NAV_SCRIPT = `
(() => {
  const $ = (id) => document.getElementById(id);
  const here = location.pathname + location.search;
  if (location.pathname !== '/login') $('nav-login').href = '/login?from=' + encodeURIComponent(here);
  const token = localStorage.getItem('session_token');
  const show = (wallet) => {
    const code = $('nav-wallet-address');
    code.textContent = wallet.slice(0, 6) + '\u2026' + wallet.slice(-4); code.title = wallet; code.dataset.wallet = wallet;
    $('nav-wallet').hidden = false; $('nav-logout').hidden = false; $('nav-login').hidden = true;
    document.dispatchEvent(new CustomEvent('session:wallet', { detail: { wallet, token } }));
  };
  const signedOut = () => { $('nav-wallet').hidden = true; $('nav-logout').hidden = true; $('nav-login').hidden = false; document.dispatchEvent(new CustomEvent('session:none')); };
  // Not known either way (network error, 5xx, or the request cut off because the user clicked on): the token is
  // kept and the navigation stays as the server rendered it; the next page asks again.
  const unknown = () => document.dispatchEvent(new CustomEvent('session:unknown'));
  // After DOMContentLoaded, so the page's own script (after this one) is listening for the session events.
  const start = () => {
    if (!token) { signedOut(); return; }
    fetch('/users/session/validate', { headers: { 'X-Session-Token': token } })
      .then(async (r) => {
        if (r.ok) return show((await r.json()).wallet);
        // Only the server's 401 says the token is no session; forget it unless another tab stored a new one since.
        if (r.status !== 401) return unknown();
        if (localStorage.getItem('session_token') === token) localStorage.removeItem('session_token');
        signedOut();
      })
      .catch(unknown);
  };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start); else start();
  $('nav-logout').addEventListener('click', async () => {
    const current = localStorage.getItem('session_token');
    if (current) await fetch('/users/logout', { method: 'POST', credentials: 'same-origin', headers: { 'X-Session-Token': current } }).catch(() => undefined);
    localStorage.removeItem('session_token');
    location.assign('/public');
  });
})();
`

export type PageParameters = { title: string; body: string; script?: string | undefined; wallet?: string | undefined }

/** The shared page shell (no external assets): navigation, the page's body and its own script. */
export function page({ title, body, script, wallet }: PageParameters): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)} · pay2store</title>
<link rel="icon" href="data:,">
<style>${style}</style>
</head>
<body>
${navHtml(wallet)}
<main>
${body}
</main>
<script>${NAV_SCRIPT}</script>
${script ? `<script>${script}</script>` : ''}
</body>
</html>
`
}

/**
 * Content-Security-Policy for a server-rendered page: only this origin, and inline scripts only by the
 * SHA-256 of the exact scripts the page carries (no other inline script can run — an injected one fails).
 * Framing is refused (no clickjacking of the login button).
 */
export function contentSecurityPolicy(html: string): string {
  const hashes = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => `'sha256-${createHash('sha256').update(m[1]!).digest('base64')}'`)
  return [
    "default-src 'self'",
    `script-src 'self'${hashes.length ? ` ${hashes.join(' ')}` : ''}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ')
}
