import { scriptJson } from '../html.js'
import { sessionPage } from '../pages.js'
import { clientScript, sessionStyle } from './clientScript.js'

export type StoragePageParameters = {
  wallet: string | undefined
  /** The Arweave gateway uploads are linked to; undefined when paid storage is not configured (uploads are off). */
  arweaveGatewayUrl: string | undefined
  /** The EVM rails the browser wallet can pay on (the rail registry's), with their names. */
  evmRails: { network: string; label: string }[]
}

/**
 * `/storage/`: pay for and upload a file from the browser, then follow the wallet's uploads.
 *
 * 1. The price is `GET /store/quote?bytes=&mime_type=` (the same requirements a 402 of `POST /store` gives).
 * 2. For an EVM rail the wallet signs the EIP-3009 `TransferWithAuthorization` with `eth_signTypedData_v4`,
 *    and the page builds the x402 v2 payment payload exactly as `@x402/evm`'s exact client and
 *    `@x402/core`'s `x402Client.createPaymentPayload` do: authorization `{from, to: payTo, value: amount,
 *    validAfter: "0", validBefore: now + maxTimeoutSeconds, nonce: 32 random bytes}`, domain `{name, version}`
 *    of `extra`, the chain id of the network and `verifyingContract: asset`; the payload is
 *    `{x402Version: 2, payload: {authorization, signature}, extensions, resource, accepted}`, sent base64 of
 *    its JSON (UTF-8) in `PAYMENT-SIGNATURE`.
 * 3. The upload is an XMLHttpRequest (the fetch API reports no upload progress) of the multipart form.
 * 4. `GET /store/uploads` lists the wallet's uploads, refreshed every few seconds while one is not final.
 */
/** The columns of the uploads table, in order (also each cell's label on a narrow screen). */
const UPLOAD_COLUMNS = ['When', 'Size', 'Paid', 'Status', 'Verification', 'Receipt', 'Arweave']

export function storagePage({ wallet, arweaveGatewayUrl, evmRails }: StoragePageParameters): string {
  const content = `${sessionStyle}
<section aria-labelledby="store-h">
<h2 id="store-h">Store a file permanently</h2>
<p class="muted">Paid once with x402 (USDC, signed in your wallet — no transaction for you to send), stored on Arweave.</p>
${arweaveGatewayUrl === undefined ? '<p id="storage-off" class="error">Paid storage is not configured on this gateway: uploads are off. Its operator turns it on (docs/configuration.md, "Paid storage").</p>' : ''}
<label for="file">File</label>
<input id="file" type="file"${arweaveGatewayUrl === undefined ? ' disabled' : ''}>
<label for="rail">Pay with</label>
<select id="rail" disabled><option value="">Choose a file first</option></select>
<p id="price" role="status" class="muted"></p>
<p class="muted">This page pays on the EVM rails (your wallet signs; the service settles). The Algorand rail — a transaction you submit from an Algorand wallet first — is open to API clients (<code>POST /store</code>), not offered here.</p>
<button id="pay" type="button" disabled>Sign payment and upload</button>
<label for="progress">Upload progress</label>
<progress id="progress" max="100" value="0">0%</progress>
<p id="status" role="status" aria-live="polite" class="muted"></p>
<div id="receipt" aria-live="polite"></div>
</section>
<section aria-labelledby="uploads-h">
<h2 id="uploads-h">Your uploads</h2>
<p id="uploads-status" role="status" class="muted">Loading…</p>
<div class="wrap" tabindex="0" role="region" aria-label="Your uploads"><table id="uploads" class="stack" role="table">
<caption class="muted">Newest first. Pending uploads refresh by themselves.</caption>
<thead role="rowgroup"><tr role="row">${UPLOAD_COLUMNS.map((c) => `<th scope="col" role="columnheader">${c}</th>`).join('')}</tr></thead>
<tbody role="rowgroup"></tbody>
</table></div>
</section>`
  const script = `${clientScript}
const ARWEAVE = ${scriptJson((arweaveGatewayUrl ?? '').replace(/\/+$/, ''))};
const COLUMNS = ${scriptJson(UPLOAD_COLUMNS)};
const NETWORK_NAMES = ${scriptJson(Object.fromEntries(evmRails.map((r) => [r.network, r.label])))};
let quote = null;
const usd = (atomic) => { const a = BigInt(atomic); const frac = (a % 1000000n).toString().padStart(6, '0'); return '$' + (a / 1000000n).toString() + '.' + frac; };
const mimeOf = (file) => (file.type && /^[\\x21-\\x7E]+$/.test(file.type) ? file.type : 'application/octet-stream');
const toHex = (bytes) => '0x' + Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
const base64Json = (value) => btoa(Array.from(new TextEncoder().encode(JSON.stringify(value)), (b) => String.fromCharCode(b)).join(''));

async function priceFile() {
  const file = $('file').files[0];
  quote = null; $('pay').disabled = true; $('rail').disabled = true; $('receipt').replaceChildren(); $('progress').value = 0;
  if (!file) { say('price', ''); return; }
  if (file.size === 0) { say('price', 'This file is empty: there is nothing to store.', true); return; }
  say('price', 'Getting the price…');
  try {
    quote = await api('/store/quote?bytes=' + file.size + '&mime_type=' + encodeURIComponent(mimeOf(file)));
    const rails = quote.accepts.filter((r) => Object.hasOwn(NETWORK_NAMES, r.network));
    $('rail').replaceChildren(...rails.map((r) => h('option', { value: r.network, text: (NETWORK_NAMES[r.network] || r.network) + ' — ' + usd(r.amount) })));
    $('rail').disabled = rails.length === 0;
    say('price', 'Storing ' + bytes(file.size) + ' costs ' + usd(rails[0] ? rails[0].amount : quote.quote.amount) + ' (price held until ' + when(quote.quote.valid_until) + ').');
    $('pay').disabled = rails.length === 0;
  } catch (e) { say('price', 'No price: ' + message(e), true); }
}

async function signPayment(requirement, from) {
  const chainId = Number(requirement.network.split(':')[1]);
  const current = await window.ethereum.request({ method: 'eth_chainId' });
  if (Number(current) !== chainId) await window.ethereum.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: '0x' + chainId.toString(16) }] });
  const authorization = {
    from,
    to: requirement.payTo,
    value: requirement.amount,
    validAfter: '0',
    validBefore: String(Math.floor(Date.now() / 1000) + requirement.maxTimeoutSeconds),
    nonce: toHex(crypto.getRandomValues(new Uint8Array(32))),
  };
  const typedData = {
    types: {
      EIP712Domain: [{ name: 'name', type: 'string' }, { name: 'version', type: 'string' }, { name: 'chainId', type: 'uint256' }, { name: 'verifyingContract', type: 'address' }],
      TransferWithAuthorization: [{ name: 'from', type: 'address' }, { name: 'to', type: 'address' }, { name: 'value', type: 'uint256' }, { name: 'validAfter', type: 'uint256' }, { name: 'validBefore', type: 'uint256' }, { name: 'nonce', type: 'bytes32' }],
    },
    primaryType: 'TransferWithAuthorization',
    domain: { name: requirement.extra.name, version: requirement.extra.version, chainId, verifyingContract: requirement.asset },
    message: authorization,
  };
  const signature = await window.ethereum.request({ method: 'eth_signTypedData_v4', params: [from, JSON.stringify(typedData)] });
  const payment = { x402Version: 2, payload: { authorization, signature }, resource: quote.resource, accepted: requirement };
  if (quote.extensions) payment.extensions = quote.extensions;
  return base64Json(payment);
}

function upload(file, header) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', '/store');
    xhr.setRequestHeader('PAYMENT-SIGNATURE', header);
    xhr.responseType = 'json';
    xhr.upload.onprogress = (e) => { if (e.lengthComputable) { const pct = Math.round((e.loaded / e.total) * 100); $('progress').value = pct; $('progress').textContent = pct + '%'; } };
    xhr.onload = () => resolve({ status: xhr.status, body: xhr.response || {} });
    xhr.onerror = () => reject(new Error('the upload was interrupted'));
    const form = new FormData();
    form.append('file', new Blob([file], { type: mimeOf(file) }), file.name || 'file');
    xhr.send(form);
  });
}

async function payAndUpload() {
  const file = $('file').files[0];
  const requirement = quote && quote.accepts.find((r) => r.network === $('rail').value);
  if (!file || !requirement) return;
  if (!window.ethereum) { say('status', 'No browser wallet found (EIP-1193).', true); return; }
  $('pay').disabled = true; $('receipt').replaceChildren(); $('progress').value = 0;
  try {
    say('status', 'Confirm the payment of ' + usd(requirement.amount) + ' in your wallet…');
    const [from] = await window.ethereum.request({ method: 'eth_requestAccounts' });
    const header = await signPayment(requirement, from);
    say('status', 'Uploading…');
    const { status, body } = await upload(file, header);
    if (status === 200 || status === 202) {
      $('progress').value = 100;
      say('status', status === 200 ? 'Stored and paid.' : 'Paid; the upload is queued and will be retried.');
      showReceipt(body);
      await refreshUploads();
    } else {
      say('status', 'Upload refused (' + status + '): ' + (body.error || '') + (body.message ? ' — ' + body.message : ''), true);
    }
  } catch (e) {
    say('status', 'Payment or upload failed: ' + message(e), true);
  } finally { $('pay').disabled = !quote; }
}

function showReceipt(r) {
  const rows = [['Arweave id', r.arTxId || r.queue_id], ['SHA-256', r.sha256], ['Size', r.sizeBytes !== undefined ? bytes(r.sizeBytes) + ' (' + r.sizeBytes.toLocaleString('en-US') + ' bytes)' : undefined], ['Settlement', r.settlement ? r.settlement.transaction : undefined], ['Network', r.settlement ? (NETWORK_NAMES[r.settlement.network] || r.settlement.network) + ' (' + r.settlement.network + ')' : undefined]];
  const dl = h('dl', { id: 'receipt-details' });
  for (const [k, v] of rows) if (v !== undefined) dl.append(h('dt', { text: k }), h('dd', {}, h('code', { text: String(v) })));
  $('receipt').replaceChildren(h('h3', { text: 'Receipt' }), dl);
  if (r.arTxId) $('receipt').append(h('p', {}, h('a', { href: ARWEAVE + '/' + r.arTxId, text: 'View on the Arweave gateway' }), ' · ', h('a', { href: '/store/receipts/' + r.arTxId, text: 'Receipt (JSON)' })));
}

const FINAL = ['verified', 'verify_failed'];
let timer = null;
function verification(u) {
  if (u.status === 'verified') return h('span', { class: 'ok', text: '✓ SHA-256 and tags match' + (u.attestation ? ' · attested on chain ' + u.attestation.chain_id : '') });
  if (u.status === 'verify_failed') return h('span', { class: 'error', text: '✗ ' + (u.error || 'verification failed') });
  return h('span', { class: 'warn', text: u.status === 'stored' ? 'waiting for confirmation…' : 'not stored yet' });
}
async function refreshUploads() {
  clearTimeout(timer);
  try {
    const { uploads } = await api('/store/uploads?limit=50');
    // each cell carries its column's name: on a narrow screen the row is a card and the name labels the cell
    const cell = (i, attrs, ...children) => h('td', { role: 'cell', 'data-label': COLUMNS[i], ...attrs }, ...children);
    $('uploads').tBodies[0].replaceChildren(...uploads.map((u) => h('tr', { role: 'row', 'data-upload': u.upload_id, 'data-status': u.status },
      cell(0, { text: when(u.created_at) }),
      cell(1, { class: 'num', title: u.size_bytes + ' bytes', text: bytes(u.size_bytes) }),
      cell(2, { text: usd(u.deposit.amount_atomic) + ' · ' + (NETWORK_NAMES[u.deposit.network] || u.deposit.network) }),
      cell(3, { class: 'upload-status', text: u.status }),
      cell(4, {}, verification(u)),
      cell(5, {}, u.ar_tx_id ? h('a', { href: '/store/receipts/' + u.ar_tx_id, text: 'receipt' }) : h('span', { class: 'muted', text: '—' })),
      cell(6, {}, u.ar_tx_id ? h('a', { href: ARWEAVE + '/' + u.ar_tx_id, title: 'Arweave item ' + u.ar_tx_id }, h('code', { text: short(u.ar_tx_id) })) : h('span', { class: 'muted', text: '—' })),
    )));
    const pending = uploads.some((u) => !FINAL.includes(u.status));
    say('uploads-status', uploads.length === 0 ? 'No uploads yet.' : count(uploads.length, 'upload') + (pending ? '; refreshing while some are pending…' : '.'));
    if (pending) timer = setTimeout(refreshUploads, 3000);
  } catch (e) { say('uploads-status', 'Could not list your uploads: ' + message(e), true); }
}

$('file').addEventListener('change', priceFile);
$('pay').addEventListener('click', payAndUpload);
refreshUploads();
`
  return sessionPage('Storage', wallet, content, script)
}
