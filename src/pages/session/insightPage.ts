import { sessionPage } from '../pages.js'
import { clientScript, sessionStyle } from './clientScript.js'

/** Kinds offered in the filter (seed 000 §6.1 and the designed ones); any other exact kind can be typed. */
const KINDS = [
  'auth.gate.redirect', 'auth.login', 'auth.logout', 'admin.shadow_overlord_action', 'admin.cabinet.provisioned', 'admin.cabinet.cleared',
  'admin.shadow_overlord_release_key', 'storage.upload.stored', 'storage.upload.verified', 'storage.upstream.credit_low',
  'storage.upstream.topped_up', 'llm.key.created', 'llm.key.revoked', 'feedback.submitted',
]

/**
 * `/insight/`: the catalogue's recent events (`GET /insight/catalogue/recent?h=true`), newest first, with a
 * kind filter, refreshed every few seconds while "Live" is on (paused when the tab is hidden).
 */
export function insightPage(wallet: string | undefined): string {
  const content = `${sessionStyle}
<section aria-labelledby="events-h">
<h2 id="events-h">Catalogue events</h2>
<div class="row">
<div><label for="kind">Kind</label><input id="kind" list="kinds" placeholder="all kinds" autocomplete="off" spellcheck="false">
<datalist id="kinds">${KINDS.map((k) => `<option value="${k}"></option>`).join('')}</datalist></div>
<div><label for="limit">How many</label><select id="limit"><option>20</option><option selected>50</option><option>200</option></select></div>
<div><label><input id="live" type="checkbox" checked style="width:auto"> Live (every 5 s)</label></div>
</div>
<button id="refresh" type="button">Refresh</button>
<p id="events-status" role="status" class="muted">Loading…</p>
<div class="wrap" tabindex="0" role="region" aria-label="Catalogue events (scrolls sideways)"><table id="events">
<caption class="muted">Newest first.</caption>
<thead><tr><th scope="col">When</th><th scope="col">Kind</th><th scope="col">Severity</th><th scope="col">Actor</th><th scope="col">Summary</th></tr></thead>
<tbody></tbody>
</table></div>
</section>`
  const script = `${clientScript}
let timer = null;
async function load() {
  clearTimeout(timer);
  const kind = $('kind').value.trim();
  if (kind && !/^[a-z][a-z0-9_]*(\\.[a-z][a-z0-9_]*)+$/.test(kind)) { say('events-status', 'A kind is dotted lower-case words, like auth.gate.redirect.', true); return; }
  try {
    const q = new URLSearchParams({ h: 'true', limit: $('limit').value });
    if (kind) q.set('kind', kind);
    const { events } = await api('/insight/catalogue/recent?' + q);
    $('events').tBodies[0].replaceChildren(...events.map((e) => h('tr', { 'data-kind': e.kind },
      h('td', {}, h('time', { datetime: e.at_iso, text: when(e.at) })),
      h('td', {}, h('code', { text: e.kind })),
      h('td', { class: e.severity === 'critical' ? 'error' : e.severity === 'warning' ? 'warn' : '', text: e.severity }),
      h('td', {}, addressCode(e.actor)),
      h('td', { text: checksummed(e.summary || '') }),
    )));
    say('events-status', count(events.length, 'event') + (kind ? ' of kind ' + kind : '') + ', updated ' + new Date().toLocaleTimeString() + '.');
  } catch (e) { say('events-status', 'Could not read the catalogue: ' + message(e), true); }
  if ($('live').checked && !document.hidden) timer = setTimeout(load, 5000);
}
$('refresh').addEventListener('click', load);
$('kind').addEventListener('change', load);
$('limit').addEventListener('change', load);
$('live').addEventListener('change', load);
document.addEventListener('visibilitychange', () => { if (!document.hidden && $('live').checked) load(); });
load();
`
  return sessionPage('Insight', wallet, content, script)
}
