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
const list = document.getElementById('wallets');
const say = (text, error) => { status.textContent = text; status.className = error ? 'error' : 'muted'; };
const toHex = (text) => '0x' + Array.from(new TextEncoder().encode(text), (b) => b.toString(16).padStart(2, '0')).join('');
async function json(response) { const body = await response.json().catch(() => ({})); if (!response.ok) throw new Error(body.message || ('HTTP ' + response.status)); return body; }
// EIP-6963: every injected wallet announces itself; the user picks one. A lone legacy window.ethereum is listed too.
const providers = new Map();
function render() {
  const entries = [...providers.values()];
  if (!entries.length && window.ethereum) entries.push({ info: { uuid: 'legacy', name: 'Browser wallet', rdns: '' }, provider: window.ethereum });
  const chosen = list.querySelector('input:checked');
  list.textContent = '';
  entries.forEach((entry, index) => {
    const label = document.createElement('label');
    const input = document.createElement('input');
    input.type = 'radio'; input.name = 'wallet'; input.value = entry.info.uuid;
    input.checked = chosen ? chosen.value === entry.info.uuid : index === 0;
    label.append(input);
    if (typeof entry.info.icon === 'string' && entry.info.icon.startsWith('data:image/')) {
      const img = document.createElement('img'); img.src = entry.info.icon; img.alt = ''; img.width = 20; img.height = 20; label.append(img);
    }
    label.append(document.createTextNode(entry.info.name));
    list.append(label);
  });
  document.getElementById('wallet-choice').hidden = entries.length < 2;
  document.getElementById('no-wallet').hidden = entries.length > 0;
  return entries;
}
window.addEventListener('eip6963:announceProvider', (event) => {
  const detail = event.detail;
  if (!detail || !detail.info || typeof detail.info.uuid !== 'string' || !detail.provider) return;
  providers.set(detail.info.uuid, detail);
  render();
});
window.dispatchEvent(new Event('eip6963:requestProvider'));
render();
function chosenProvider() {
  const entries = render();
  const chosen = list.querySelector('input:checked');
  const entry = entries.find((e) => chosen && e.info.uuid === chosen.value) || entries[0];
  return entry && entry.provider;
}
async function signIn() {
  const wallet = chosenProvider();
  if (!wallet) { say('No browser wallet found (EIP-1193 / EIP-6963). Install one and reload.', true); return; }
  try {
    say('Connecting wallet…');
    const [address] = await wallet.request({ method: 'eth_requestAccounts' });
    const token = localStorage.getItem('session_token');
    const permissions = await json(await fetch('/users/' + encodeURIComponent(address) + '/permissions', { headers: token ? { 'X-Session-Token': token } : {} }));
    if (permissions.has_session) { say('Welcome back.'); location.assign(from); return; }
    say(permissions.view === 'welcome_back' ? 'Welcome back — sign the message to continue.' : 'Sign the message in your wallet to sign in.');
    const challenge = await json(await fetch('/users/challenge', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ wallet: address }) }));
    const signature = await wallet.request({ method: 'personal_sign', params: [toHex(challenge.challenge), address] });
    const session = await json(await fetch('/users/register-with-signature', { method: 'POST', headers: { 'content-type': 'application/json' }, credentials: 'same-origin', body: JSON.stringify({ wallet: address, challenge: challenge.challenge, signature }) }));
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
<p class="muted">You will sign a Sign-In with Ethereum (EIP-4361) message. It costs nothing and sends no transaction. Smart-contract wallets (EIP-1271, EIP-6492) work too.</p>
<p>After signing in you return to <code>${escapeHtml(from)}</code>.</p>
<fieldset id="wallet-choice" hidden><legend>Choose a wallet</legend><div id="wallets" class="wallet-list"></div></fieldset>
<p id="no-wallet" class="muted" hidden>No browser wallet found. Install one (any EIP-1193 / EIP-6963 wallet) and reload.</p>
<button id="signin" type="button">Connect wallet and sign in</button>
<p id="status" class="muted" role="status" aria-live="polite"></p>`,
    script,
  })
}
