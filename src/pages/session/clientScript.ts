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
// Sizes in binary units, three significant figures ("293 KiB", not "300000 B"); counts with their noun.
function bytes(n) {
  if (n < 1024) return n + ' B';
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024, i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return String(v >= 100 ? Math.round(v) : v >= 10 ? Number(v.toFixed(1)) : Number(v.toFixed(2))) + ' ' + units[i];
}
const count = (n, one, many) => n + ' ' + (n === 1 ? one : many || one + 's');
// Keccak-256 (the pre-SHA-3 padding Ethereum uses), only to write addresses in their EIP-55 checksummed form
// as the wallet and the navigation do; a few addresses per page, so plain BigInt lanes are fast enough.
function keccak256Hex(input) {
  const M = 0xffffffffffffffffn;
  const rol = (v, n) => (n ? ((v << BigInt(n)) | (v >> BigInt(64 - n))) & M : v);
  const A = new Array(25).fill(0n);
  const permute = () => {
    let lfsr = 1;
    for (let round = 0; round < 24; round++) {
      const C = [0, 1, 2, 3, 4].map((x) => A[x] ^ A[x + 5] ^ A[x + 10] ^ A[x + 15] ^ A[x + 20]);
      for (let x = 0; x < 5; x++) { const D = C[(x + 4) % 5] ^ rol(C[(x + 1) % 5], 1); for (let y = 0; y < 25; y += 5) A[y + x] ^= D; }
      let x = 1, y = 0, current = A[1];
      for (let t = 0; t < 24; t++) { const Y = (2 * x + 3 * y) % 5; x = y; y = Y; const next = A[x + 5 * y]; A[x + 5 * y] = rol(current, ((t + 1) * (t + 2) / 2) % 64); current = next; }
      for (let y = 0; y < 25; y += 5) { const T = A.slice(y, y + 5); for (let x = 0; x < 5; x++) A[y + x] = T[x] ^ (~T[(x + 1) % 5] & M & T[(x + 2) % 5]); }
      for (let j = 0; j < 7; j++) { const bit = lfsr & 1; lfsr = lfsr & 0x80 ? ((lfsr << 1) ^ 0x71) & 0xff : (lfsr << 1) & 0xff; if (bit) A[0] ^= 1n << BigInt((1 << j) - 1); }
    }
  };
  const rate = 136;
  const padded = new Uint8Array(Math.floor(input.length / rate) * rate + rate);
  padded.set(input); padded[input.length] ^= 0x01; padded[padded.length - 1] ^= 0x80;
  for (let off = 0; off < padded.length; off += rate) {
    for (let i = 0; i < rate / 8; i++) { let lane = 0n; for (let b = 7; b >= 0; b--) lane = (lane << 8n) | BigInt(padded[off + i * 8 + b]); A[i] ^= lane; }
    permute();
  }
  let hex = '';
  for (let i = 0; i < 4; i++) for (let b = 0; b < 8; b++) hex += Number((A[i] >> BigInt(8 * b)) & 0xffn).toString(16).padStart(2, '0');
  return hex;
}
// EIP-55: one address format on every page (the API writes some in lower case).
function checksum(address) {
  const lower = address.slice(2).toLowerCase();
  const hash = keccak256Hex(new TextEncoder().encode(lower));
  return '0x' + Array.from(lower, (c, i) => (parseInt(hash[i], 16) >= 8 ? c.toUpperCase() : c)).join('');
}
const checksummed = (text) => (text ? String(text).replace(/\\b0x[0-9a-fA-F]{40}\\b/g, checksum) : text);
// An address as the navigation shows it (0xAbCd…1234, EIP-55), the whole of it in the title; other text as it is.
const isAddress = (s) => /^0x[0-9a-fA-F]{40}$/.test(s || '');
const shortAddress = (s) => { const c = checksum(s); return c.slice(0, 6) + '\u2026' + c.slice(-4); };
const addressCode = (s) => (isAddress(s) ? h('code', { title: checksum(s), text: shortAddress(s) }) : h('code', { title: s || '', text: short(s, 18) }));
function say(id, text, error) { const el = $(id); el.textContent = text; el.className = error ? 'error' : 'muted'; }
const message = (e) => (e && e.message ? e.message : String(e));
`

/**
 * Styles shared by the session pages: forms, tables that wrap at word boundaries and scroll sideways (in their
 * `.wrap` box) rather than break inside a word, a visible focus ring. A `table.stack` turns each row into a card on a
 * narrow screen: every cell on a line of its own, labelled with its column (`data-label`), nothing off screen.
 */
export const sessionStyle = `<style>
main section{background:#161a21;border:1px solid #2a303c;border-radius:8px;padding:14px;margin:14px 0}
main h2{font-size:1.1rem;margin:0 0 8px} label{display:block;margin:10px 0 4px}
input,select,textarea{width:100%;max-width:100%;box-sizing:border-box;background:#0f1115;color:#e6e6e6;border:1px solid #4a5160;border-radius:6px;padding:8px;font:inherit}
:focus-visible{outline:3px solid #ffd166;outline-offset:2px} button{margin:10px 8px 0 0} button:disabled{opacity:.6;cursor:default}
button.secondary{background:#3a3f4b} .wrap{overflow-x:auto;border-radius:4px} caption{text-align:left;padding:4px 0} main time{white-space:nowrap} table{width:100%;border-collapse:collapse;font-size:.9rem}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid #2a303c;vertical-align:top;overflow-wrap:normal} td code,th code{white-space:nowrap} main code{overflow-wrap:break-word} dd{margin-left:1em}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap} .reason{overflow-wrap:anywhere}
progress{width:100%;height:18px} .ok{color:#8ee59b} .warn{color:#ffd166} .error{color:#ff9b9b} a{color:#9ecbff}
.term{background:#05070a;color:#b8f7c1;font-family:ui-monospace,monospace;padding:10px;border-radius:6px;min-height:12em;max-height:60vh;overflow:auto;white-space:pre-wrap}
.chat{white-space:pre-wrap;background:#0b0d11;padding:10px;border-radius:6px;min-height:6em}
.row{display:flex;gap:8px;flex-wrap:wrap;align-items:flex-end} .row>*{flex:1 1 12em}
@media (max-width:40em){
table.stack thead{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
table.stack,table.stack tbody,table.stack tr{display:block;width:100%} table.stack tr{border-bottom:1px solid #2a303c;padding:6px 0}
table.stack td,table.stack tbody th{display:grid;grid-template-columns:minmax(6.5em,32%) minmax(0,1fr);gap:8px;border:0;padding:3px 4px;text-align:left}
table.stack td::before,table.stack tbody th::before{content:attr(data-label);color:#9aa3b2;font-weight:normal} table.stack td code{white-space:normal;overflow-wrap:anywhere}
}
</style>`
