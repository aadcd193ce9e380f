import { createHash } from 'node:crypto'
import { NAV_SCRIPT, NAV_STYLE, navHtml } from './html.js'

/**
 * The shadow-overlord administration page served at `/cabinet`, `/cabinet.html` and `/shadow-overlord`:
 * self-contained (no CDN, inline script pinned by a CSP hash), driven by a browser wallet (EIP-1193
 * `eth_requestAccounts` + `personal_sign`). Every operation runs challenge → sign → call; the bearer lives
 * only in page memory. The released key is shown once in the page and never logged.
 */
export type AdminPage = { html: string; headers: Record<string, string> }

const STYLE = `
body{font:14px/1.45 system-ui,sans-serif;margin:0;background:#0f1115;color:#e6e6e6}
main{max-width:980px;margin:0 auto;padding:24px}
h1{font-size:20px;margin:0 0 4px}h2{font-size:15px;margin:0 0 8px}
section{background:#171a21;border:1px solid #262b36;border-radius:8px;padding:14px;margin:12px 0}
label{display:block;margin:6px 0 2px;color:#aab}
input,textarea,select{width:100%;box-sizing:border-box;background:#0f1115;color:#e6e6e6;border:1px solid #333a48;border-radius:6px;padding:6px}
button{background:#2d5bd7;color:#fff;border:0;border-radius:6px;padding:7px 12px;margin:8px 6px 0 0;cursor:pointer}
button.danger{background:#b3261e}button:disabled{opacity:.5;cursor:default}
table{width:100%;border-collapse:collapse;font-size:13px}td,th{border-bottom:1px solid #262b36;padding:4px 6px;text-align:left}
code,pre{font-family:ui-monospace,monospace;font-size:12px;word-break:break-all;white-space:pre-wrap}
#log{max-height:260px;overflow:auto;background:#0b0d11;padding:8px;border-radius:6px}
.muted{color:#889}.warn{color:#ffb4a9}
`

const SCRIPT = `
'use strict';
const cfg = JSON.parse(document.getElementById('cfg').textContent);
const $ = (id) => document.getElementById(id);
const state = { account: null, jwt: null, exp: 0 };
function log(line, obj) {
  const text = obj === undefined ? line : line + ' ' + JSON.stringify(obj);
  const el = $('log'); el.textContent = new Date().toISOString().slice(11, 19) + '  ' + text + '\\n' + el.textContent;
}
function hex(s) { return '0x' + Array.from(new TextEncoder().encode(s)).map((b) => b.toString(16).padStart(2, '0')).join(''); }
async function sha256(s) {
  const d = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(s));
  return '0x' + Array.from(new Uint8Array(d)).map((b) => b.toString(16).padStart(2, '0')).join('');
}
function agentPath(id) { return encodeURIComponent(id).replace(/%3A/gi, ':'); }
async function api(method, path, body, bearer) {
  // A content type only with a body: an empty body declared as JSON is invalid JSON to the server (400
  // invalid_request) — that is what broke flow A's body-less unlock.
  const headers = body === undefined ? {} : { 'content-type': 'application/json' };
  if (bearer) headers.authorization = 'Bearer ' + state.jwt;
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await res.json().catch(() => ({}));
  if (!res.ok) { const err = new Error((data.error || res.status) + ': ' + (data.message || '')); err.status = res.status; throw err; }
  return data;
}
function wallet() {
  if (!window.ethereum) throw new Error('No EIP-1193 wallet found (window.ethereum).');
  return window.ethereum;
}
async function connect() {
  const [account] = await wallet().request({ method: 'eth_requestAccounts' });
  state.account = account; $('account').textContent = account; log('wallet connected', account);
}
async function personalSign(message) {
  if (!state.account) await connect();
  return wallet().request({ method: 'personal_sign', params: [hex(message), state.account] });
}
async function signedChallenge(scope, params) {
  const c = await api('POST', '/admin/shadow/challenge', { scope, params });
  log('challenge ' + scope + ' issued, expires_at ' + c.expires_at);
  const signature = await personalSign(c.message);
  return { nonce: c.nonce, signature };
}
async function ensureBearer() {
  if (state.jwt && state.exp - 10 > Date.now() / 1000) return;
  const signed = await signedChallenge('auth', {});
  const t = await api('POST', '/admin/shadow/verify', signed);
  state.jwt = t.jwt; state.exp = t.exp; $('bearer').textContent = 'valid until ' + new Date(t.exp * 1000).toLocaleTimeString();
  log('bearer issued');
}
const company = () => $('company').value.trim();
// Every field is escaped before it becomes markup: roster fields come from the server, but the page must not
// turn any of them into HTML.
const esc = (v) => String(v).replace(/[&<>"']/g, (c) => '&#' + c.charCodeAt(0) + ';');
function renderRoster(roster) {
  const rows = roster.members.map((m) => '<tr><td>' + esc(m.role) + '</td><td>' + esc(m.label) + '</td><td><code>' + esc(m.address || '—') + '</code></td><td>' + esc(m.boardroom_weight) + '%</td></tr>');
  $('roster').innerHTML = '<table><tr><th>role</th><th>label</th><th>address</th><th>weight</th></tr>' + rows.join('') + '</table>';
  $('agent').innerHTML = roster.members.map((m) => '<option>' + esc(m.entity_id) + '</option>').join('');
}
const actions = {
  connect,
  async bearer() { await ensureBearer(); },
  async roster() { const r = await api('GET', '/cabinet/' + encodeURIComponent(company())); renderRoster(r); log('roster loaded', { company: r.company }); },
  async preflight() { await ensureBearer(); log('preflight', await api('GET', '/admin/cabinet/' + encodeURIComponent(company()) + '/preflight', undefined, true)); },
  async provision() {
    await ensureBearer();
    const signed = await signedChallenge('cabinet.provision', { company: company() });
    const r = await api('POST', '/admin/cabinet/' + encodeURIComponent(company()) + '/provision', signed, true);
    log(r.created ? 'cabinet provisioned' : 'cabinet already present', { company: r.company });
    renderRoster({ members: [r.ceo, ...r.soldiers] });
  },
  async clear() {
    const confirm = window.prompt('Type DESTROY-' + company() + '-CABINET to destroy this cabinet (funds are NOT migrated):');
    if (!confirm) return;
    await ensureBearer();
    const signed = await signedChallenge('cabinet.clear', { company: company(), confirm });
    log('cabinet cleared', await api('POST', '/admin/cabinet/' + encodeURIComponent(company()) + '/clear', { ...signed, confirm }, true));
    $('roster').textContent = '';
  },
  async sign() {
    const agentId = $('agent').value, message = $('message').value;
    await ensureBearer();
    const signed = await signedChallenge('vault.sign', { agent_id: agentId, message_sha256: await sha256(message) });
    const r = await api('POST', '/vault/sign/' + agentPath(agentId), { ...signed, message }, true);
    $('signature').textContent = 'address: ' + r.address + '\\nsignature: ' + r.signature; log('signed as ' + r.address);
  },
  async release() {
    const agentId = $('agent').value;
    const confirm = window.prompt('Emergency key release for ' + agentId + '. Type RELEASE-PRIVATE-KEY:');
    if (!confirm) return;
    await ensureBearer();
    const signed = await signedChallenge('release.key', { agent_id: agentId, confirm });
    const r = await api('POST', '/admin/shadow/release-key/' + agentPath(agentId), { ...signed, confirm }, true);
    $('released').textContent = r.agent_id + '\\n' + r.address + '\\n' + r.private_key + '\\n' + r.warning;
    log('key released for ' + r.agent_id + ' (shown once above; not logged)');
  },
  async unlockB() {
    await ensureBearer();
    const signature = await personalSign(cfg.unlockMessage);
    log('vault', await api('POST', '/vault/credentials/reunlock', { address: state.account, signature, message: cfg.unlockMessage }, true));
  },
  async unlockA() { await ensureBearer(); log('vault', await api('POST', '/vault/credentials/reunlock', undefined, true)); },
};
document.querySelectorAll('button[data-action]').forEach((b) => b.addEventListener('click', async () => {
  b.disabled = true;
  try { await actions[b.dataset.action](); } catch (e) { log('error ' + (e && e.message ? e.message : e)); } finally { b.disabled = false; }
}));
$('unlockMessage').textContent = cfg.unlockMessage;
`

function escapeJsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026')
}

export function renderAdminPage(options: { unlockMessage: string }): AdminPage {
  const config = escapeJsonForScript({ unlockMessage: options.unlockMessage })
  const style = STYLE + NAV_STYLE
  const hash = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Shadow overlord · cabinets</title><link rel="icon" href="data:,"><style>${style}</style></head>
<body>${navHtml()}<main>
<h1>Shadow overlord · company cabinets</h1>
<p class="muted">Every action is authorised by your wallet: the server issues a single-use challenge, your wallet signs it
(EIP-191 <code>personal_sign</code>), and only then is the vault touched. The bearer token stays in this tab's memory.</p>
<section><h2>Wallet</h2>
<div>account: <code id="account">not connected</code> · bearer: <span id="bearer">none</span></div>
<button data-action="connect">Connect wallet</button><button data-action="bearer">Get bearer (sign auth challenge)</button></section>
<section><h2>Vault</h2>
<p class="muted">The vault is sealed after every restart. Unlock by signing the fixed unlock message (flow B) or let the
server read its proof file (flow A).</p><pre id="unlockMessage"></pre>
<button data-action="unlockB">Unlock (sign with wallet)</button><button data-action="unlockA">Unlock (server proof file)</button></section>
<section><h2>Cabinet</h2>
<label for="company">Company</label><input id="company" value="ACME" pattern="[A-Za-z0-9][A-Za-z0-9_-]{0,63}">
<button data-action="roster">Show roster</button><button data-action="preflight">Preflight</button>
<button data-action="provision">Provision</button><button class="danger" data-action="clear">Clear…</button>
<div id="roster"></div></section>
<section><h2>Signing oracle</h2>
<label for="agent">Member</label><select id="agent"></select>
<label for="message">Message</label><textarea id="message" rows="3"></textarea>
<button data-action="sign">Sign as member</button><pre id="signature"></pre>
<h2 class="warn">Emergency key release</h2>
<button class="danger" data-action="release">Release private key…</button><pre id="released" class="warn"></pre></section>
<section><h2 id="log-title">Log</h2><pre id="log" tabindex="0" role="log" aria-labelledby="log-title"></pre></section>
</main>
<script type="application/json" id="cfg">${config}</script>
<script>${NAV_SCRIPT}</script>
<script>${SCRIPT}</script>
</body></html>
`
  return {
    html,
    headers: {
      'Content-Security-Policy': `default-src 'none'; script-src ${hash(NAV_SCRIPT)} ${hash(SCRIPT)}; style-src ${hash(style)}; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
      'X-Frame-Options': 'DENY',
      'Cache-Control': 'no-store',
      'Referrer-Policy': 'no-referrer',
    },
  }
}
