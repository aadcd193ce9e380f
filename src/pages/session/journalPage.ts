import { sessionPage } from '../pages.js'
import { clientScript, sessionStyle } from './clientScript.js'

/**
 * `/journal`: the wallet's own activity from `GET /users/me/journal` — sign-ins, today's quota and the cost
 * calls per day, and the paid uploads with their payments.
 */
export function journalPage(wallet: string | undefined): string {
  const content = `${sessionStyle}
<p id="journal-status" role="status" class="muted">Loading…</p>
<section aria-labelledby="quota-h"><h2 id="quota-h">Quota</h2>
<p id="quota"></p>
<label for="quota-bar">Cost calls used today</label><progress id="quota-bar" max="100" value="0"></progress>
<div class="wrap" tabindex="0" role="region" aria-label="Cost calls per day (scrolls sideways)"><table id="usage"><caption class="muted">Cost calls per UTC day.</caption><thead><tr><th scope="col">Day</th><th scope="col">Calls</th></tr></thead><tbody></tbody></table></div>
</section>
<section aria-labelledby="signins-h"><h2 id="signins-h">Sign-ins</h2>
<p id="logins" class="muted"></p>
<div class="wrap" tabindex="0" role="region" aria-label="Sign-ins (scrolls sideways)"><table id="signins"><caption class="muted">Newest first.</caption><thead><tr><th scope="col">Signed in</th><th scope="col">Expires</th><th scope="col">State</th></tr></thead><tbody></tbody></table></div>
</section>
<section aria-labelledby="payments-h"><h2 id="payments-h">Uploads and payments</h2>
<div class="wrap" tabindex="0" role="region" aria-label="Uploads and payments (scrolls sideways)"><table id="payments"><caption class="muted">Newest first; see <a href="/storage/">Storage</a> for more.</caption><thead><tr><th scope="col">When</th><th scope="col">Size</th><th scope="col">Paid</th><th scope="col">Network</th><th scope="col">Settlement</th><th scope="col">Status</th></tr></thead><tbody></tbody></table></div>
</section>`
  const script = `${clientScript}
const usd = (atomic) => { const a = BigInt(atomic); return '$' + (a / 1000000n) + '.' + (a % 1000000n).toString().padStart(6, '0'); };
async function load() {
  try {
    const j = await api('/users/me/journal');
    $('quota').textContent = j.quota.used + ' of ' + j.quota.limit + ' cost calls used today; ' + j.quota.remaining + ' left until ' + when(j.quota.resets_at) + '.';
    $('quota-bar').max = Math.max(1, j.quota.limit); $('quota-bar').value = j.quota.used;
    $('usage').tBodies[0].replaceChildren(...(j.cost_usage.length ? j.cost_usage.map((d) => h('tr', {}, h('td', { text: d.day }), h('td', { class: 'num', text: String(d.calls) }))) : [h('tr', {}, h('td', { colspan: '2', class: 'muted', text: 'No cost calls yet.' }))]));
    $('logins').textContent = 'First sign-in ' + when(j.first_login_at) + '; latest ' + when(j.last_login_at) + '.';
    $('signins').tBodies[0].replaceChildren(...j.sign_ins.map((s) => h('tr', {},
      h('td', { text: when(s.created_at) }), h('td', { text: when(s.expires_at) }),
      h('td', { class: s.current ? 'ok' : '', text: s.current ? 'this session' : s.revoked_at ? 'logged out ' + when(s.revoked_at) : s.expires_at * 1000 < Date.now() ? 'expired' : 'active' }))));
    $('payments').tBodies[0].replaceChildren(...(j.uploads.length ? j.uploads.map((u) => h('tr', { 'data-upload': u.upload_id },
      h('td', { text: when(u.created_at) }), h('td', { class: 'num', title: u.size_bytes + ' bytes', text: bytes(u.size_bytes) }), h('td', { class: 'num', text: usd(u.deposit.amount_atomic) }),
      h('td', {}, h('code', { text: u.deposit.network })), h('td', {}, h('code', { title: u.deposit.tx_hash, text: short(u.deposit.tx_hash, 18) })), h('td', { text: u.status }))) : [h('tr', {}, h('td', { colspan: '6', class: 'muted', text: 'No uploads yet.' }))]));
    say('journal-status', 'Activity of ' + checksum(j.wallet) + '.');
  } catch (e) { say('journal-status', 'Could not read your journal: ' + message(e), true); }
}
load();
`
  return sessionPage('Journal', wallet, content, script)
}
