import { sessionPage } from '../pages.js'
import { clientScript, sessionStyle } from './clientScript.js'

/**
 * `/registry/`: the marketplace agents (`GET /agents`) with model, capabilities, status and revision; a row's
 * "Details" reads `GET /agents/{id}` afresh (the revision moves when an agent evolves).
 */
export function registryPage(wallet: string | undefined): string {
  const content = `${sessionStyle}
<section aria-labelledby="agents-h">
<h2 id="agents-h">Agents</h2>
<p id="agents-status" role="status" class="muted">Loading…</p>
<div class="wrap" tabindex="0" role="region" aria-label="Agents (scrolls sideways)"><table id="agents">
<caption class="muted">The marketplace agents and what they can do.</caption>
<thead><tr><th scope="col">Agent</th><th scope="col">Role</th><th scope="col">Model</th><th scope="col">Capabilities</th><th scope="col">Status</th><th scope="col">Revision</th><th scope="col"><span class="muted">Details</span></th></tr></thead>
<tbody></tbody>
</table></div>
</section>
<section aria-labelledby="detail-h" id="detail-section" hidden>
<h2 id="detail-h" tabindex="-1">Agent</h2>
<pre id="detail"></pre>
</section>`
  const script = `${clientScript}
async function detail(id) {
  try {
    const agent = await api('/agents/' + encodeURIComponent(id));
    $('detail-h').textContent = agent.name + ' (revision ' + agent.revision + ')';
    $('detail').textContent = JSON.stringify(agent, null, 2);
    $('detail-section').hidden = false; $('detail-h').focus();
  } catch (e) { say('agents-status', 'Could not read agent ' + id + ': ' + message(e), true); }
}
async function load() {
  try {
    const { agents } = await api('/agents');
    $('agents').tBodies[0].replaceChildren(...agents.map((a) => h('tr', { 'data-agent': a.id },
      h('th', { scope: 'row' }, a.name, h('br'), h('code', { class: 'muted', text: a.id })),
      h('td', { text: a.role }),
      h('td', {}, h('code', { text: a.model })),
      h('td', { text: a.capabilities.join(', ') }),
      h('td', { class: a.status === 'available' ? 'ok' : 'warn', text: a.status }),
      h('td', { text: String(a.revision) }),
      h('td', {}, (() => { const b = h('button', { type: 'button', class: 'secondary', 'aria-label': 'Details of ' + a.name, text: 'Details' }); b.addEventListener('click', () => detail(a.id)); return b; })()),
    )));
    say('agents-status', count(agents.length, 'agent') + '.');
  } catch (e) { say('agents-status', 'Could not list the agents: ' + message(e), true); }
}
load();
`
  return sessionPage('Registry', wallet, content, script)
}
