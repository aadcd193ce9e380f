import { escapeHtml, page, scriptJson } from './html.js'

/**
 * `/login`: connects an EIP-1193 browser wallet, asks `/users/challenge` for an EIP-4361 message, signs it
 * with `personal_sign`, exchanges it at `/users/register-with-signature`, keeps the token (localStorage for
 * API calls; the server also sets the `svc_session` cookie so page navigations pass the gate) and returns to
 * `from` — already sanitised by the server, so it is always a same-origin path.
 */
export function loginPage(from: string): string {
  const script = `
const from = ${scriptJson(from)};
const status = document.getElementById('status');
const say = (text, error) => { status.textContent = text; status.className = error ? 'error' : 'muted'; };
const toHex = (text) => '0x' + Array.from(new TextEncoder().encode(text), (b) => b.toString(16).padStart(2, '0')).join('');
async function json(response) { const body = await response.json().catch(() => ({})); if (!response.ok) throw new Error(body.message || ('HTTP ' + response.status)); return body; }
async function signIn() {
  if (!window.ethereum) { say('No browser wallet found (EIP-1193). Install one and reload.', true); return; }
  try {
    say('Connecting wallet…');
    const [wallet] = await window.ethereum.request({ method: 'eth_requestAccounts' });
    const token = localStorage.getItem('session_token');
    const permissions = await json(await fetch('/users/' + wallet + '/permissions', { headers: token ? { 'X-Session-Token': token } : {} }));
    if (permissions.has_session) { say('Welcome back.'); location.assign(from); return; }
    say(permissions.view === 'welcome_back' ? 'Welcome back — sign the message to continue.' : 'Sign the message in your wallet to sign in.');
    const challenge = await json(await fetch('/users/challenge', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ wallet }) }));
    const signature = await window.ethereum.request({ method: 'personal_sign', params: [toHex(challenge.challenge), wallet] });
    const session = await json(await fetch('/users/register-with-signature', { method: 'POST', headers: { 'content-type': 'application/json' }, credentials: 'same-origin', body: JSON.stringify({ wallet, challenge: challenge.challenge, signature }) }));
    localStorage.setItem('session_token', session.session_token);
    say('Signed in as ' + session.wallet + '. Redirecting…');
    location.assign(from);
  } catch (error) { say('Sign-in failed: ' + (error && error.message ? error.message : error), true); }
}
document.getElementById('signin').addEventListener('click', signIn);
`
  return page({
    title: 'Sign in',
    body: `<h1>Sign in with your wallet</h1>
<p class="muted">You will sign a Sign-In with Ethereum (EIP-4361) message. It costs nothing and sends no transaction.</p>
<p>After signing in you return to <code>${escapeHtml(from)}</code>.</p>
<button id="signin" type="button">Connect wallet and sign in</button>
<p id="status" class="muted" role="status"></p>`,
    script,
  })
}
