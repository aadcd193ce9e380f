/**
 * Browser helpers shared by the session pages' inline scripts (each page's script starts with this text, so
 * the CSP hash pins it too). `api` calls the gateway with the session token of the login page
 * (`localStorage.session_token`) and sends a JSON content type only with a body; an error answer throws an
 * `Error` carrying the spec's error code and message. `h` builds DOM nodes from text only — never HTML — so
 * nothing a server or a user wrote is parsed as markup.
 */
export const clientScript = `
'use strict';
const $ = (id) => document.getElementById(id);
const sessionToken = () => localStorage.getItem('session_token');
async function api(path, options) {
  const o = options || {};
  const headers = {};
  const token = sessionToken();
  if (token) headers['X-Session-Token'] = token;
  if (o.body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(path, { method: o.method || 'GET', headers, credentials: 'same-origin', signal: o.signal, body: o.body === undefined ? undefined : JSON.stringify(o.body) });
  if (o.raw) { if (!res.ok) throw await apiError(res); return res; }
  if (!res.ok) throw await apiError(res);
  return res.json();
}
async function apiError(res) {
  const data = await res.json().catch(() => ({}));
  const error = new Error((data.error || data.code || ('HTTP ' + res.status)) + (data.message ? ': ' + data.message : ''));
  error.status = res.status; error.body = data;
  return error;
}
function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'text') node.textContent = String(v); else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c !== undefined && c !== null) node.append(typeof c === 'string' ? document.createTextNode(c) : c);
  return node;
}
const when = (s) => (s ? new Date(s * 1000).toISOString().replace('T', ' ').slice(0, 19) + ' UTC' : '—');
const short = (s, n) => (s && s.length > (n || 14) ? s.slice(0, (n || 14) - 4) + '…' + s.slice(-4) : s || '—');
function say(id, text, error) { const el = $(id); el.textContent = text; el.className = error ? 'error' : 'muted'; }
const message = (e) => (e && e.message ? e.message : String(e));
`

/** Styles shared by the session pages: forms, tables that scroll sideways on a phone, a visible focus ring. */
export const sessionStyle = `<style>
main section{background:#161a21;border:1px solid #2a303c;border-radius:8px;padding:14px;margin:14px 0}
main h2{font-size:1.1rem;margin:0 0 8px} label{display:block;margin:10px 0 4px}
input,select,textarea{width:100%;max-width:100%;box-sizing:border-box;background:#0f1115;color:#e6e6e6;border:1px solid #4a5160;border-radius:6px;padding:8px;font:inherit}
:focus-visible{outline:3px solid #ffd166;outline-offset:2px} button{margin:10px 8px 0 0} button:disabled{opacity:.6;cursor:default}
button.secondary{background:#3a3f4b} .wrap{overflow-x:auto} table{width:100%;border-collapse:collapse;font-size:.9rem}
th,td{text-align:left;padding:6px;border-bottom:1px solid #2a303c;vertical-align:top;overflow-wrap:normal} main code{overflow-wrap:anywhere;word-break:break-all} dd{margin-left:1em}
progress{width:100%;height:18px} .ok{color:#8ee59b} .warn{color:#ffd166} .error{color:#ff9b9b} a{color:#9ecbff}
.term{background:#05070a;color:#b8f7c1;font-family:ui-monospace,monospace;padding:10px;border-radius:6px;min-height:12em;max-height:60vh;overflow:auto;white-space:pre-wrap}
.chat{white-space:pre-wrap;background:#0b0d11;padding:10px;border-radius:6px;min-height:6em}
.row{display:flex;gap:8px;flex-wrap:wrap;align-items:flex-end} .row>*{flex:1 1 12em}
</style>`
