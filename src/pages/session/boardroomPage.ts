import { escapeHtml } from '../html.js'
import { sessionPage } from '../pages.js'
import { clientScript, sessionStyle } from './clientScript.js'

/** The company `npm start` provisions on the devnet (scripts/demoCabinet.ts): the form's first choice when it exists. */
export const DEMO_COMPANY = 'ACME'

export type BoardroomPageParameters = {
  wallet: string | undefined
  /** The companies that have a cabinet (`CabinetService.companies`). */
  companies: readonly string[]
  /** How a cabinet is had here: `devnet` (npm start made one; where the TEST overlord key is), `operator` (ask the operator), `none` (no admin tier). */
  provisioning: { kind: 'devnet'; devnetFile: string } | { kind: 'operator' } | { kind: 'none' }
}

/** What a cabinet is, who provisions one and how: shown when there is none, and behind a disclosure otherwise. */
function cabinetGuide(provisioning: BoardroomPageParameters['provisioning']): string {
  const where =
    provisioning.kind === 'devnet'
      ? `<p>On the devnet, <code>npm start</code> provisions <code>${DEMO_COMPANY}</code> when it first starts. Its overlord is a TEST key: the private key is <code>shadow.overlord.privateKey</code> in <code>${escapeHtml(provisioning.devnetFile)}</code>. Import it into a browser wallet to provision another company with the steps above.</p>`
      : provisioning.kind === 'operator'
        ? '<p>Ask the operator of this gateway for a cabinet.</p>'
        : '<p>This gateway has no overlord configured (<code>SHADOW_OVERLORD_ADDRESS</code> is unset), so no cabinet can be provisioned on it.</p>'
  return `<p>A cabinet is a company's board of eight agent wallets: a chief executive and seven soldiers, each with a boardroom weight (together 100). Convening puts your motion to each member through the chat model; it carries with more than 50 of the weight for it. The members' keys are sealed in the gateway's vault.</p>
<p>Only the overlord — the holder of the admin key whose address the gateway is configured with — provisions a cabinet, on <a href="/cabinet">/cabinet</a>:</p>
<ol>
<li>Connect the overlord's wallet.</li>
<li>Get a bearer: sign one challenge.</li>
<li>Unlock the vault: with the server's proof file (Unlock A) or by signing the unlock message (Unlock B).</li>
<li>Type the company's name and Provision: sign one more challenge.</li>
</ol>
${where}`
}

/**
 * `/boardroom`: convene a company's cabinet on a motion (`POST /boardroom/convene`, one cost call) and show the
 * outcome: carried or not, the weight for / against / abstaining, and each member's vote, weight and reason. The
 * company field offers the companies that have a cabinet (the devnet's `ACME` first); with none, the page says what a
 * cabinet is and how to get one before anything is tried.
 */
export function boardroomPage({ wallet, companies, provisioning }: BoardroomPageParameters): string {
  const chosen = companies.includes(DEMO_COMPANY) ? DEMO_COMPANY : (companies[0] ?? '')
  const guide =
    companies.length === 0
      ? `<section id="cabinet-guide" aria-labelledby="guide-h"><h2 id="guide-h">No cabinet yet</h2>
<p>No company has a cabinet on this gateway yet, so there is nothing to convene.</p>
${cabinetGuide(provisioning)}</section>`
      : `<details id="cabinet-guide"><summary>What is a cabinet, and how to get one</summary>
${cabinetGuide(provisioning)}</details>`
  const content = `${sessionStyle}
${guide}
<section aria-labelledby="motion-h">
<h2 id="motion-h">Put a motion to the cabinet</h2>
<form id="convene-form">
<div class="row">
<div><label for="company">Company</label><input id="company" required pattern="[A-Za-z0-9][A-Za-z0-9_\\-]{0,63}" value="${escapeHtml(chosen)}" list="companies" placeholder="a company with a cabinet" autocomplete="off"><datalist id="companies">${companies.map((c) => `<option value="${escapeHtml(c)}"></option>`).join('')}</datalist></div>
<div><label for="model">Model (optional)</label><input id="model" placeholder="default chat model" autocomplete="off"></div>
</div>
<p class="muted" id="companies-note">${companies.length === 0 ? 'No company has a cabinet yet.' : `Companies with a cabinet: ${companies.map((c) => `<code>${escapeHtml(c)}</code>`).join(', ')}.`}</p>
<label for="motion">Motion</label>
<textarea id="motion" rows="3" required maxlength="2000">Raise the storage markup from 25% to 30%.</textarea>
<button id="convene" type="submit">Convene</button>
</form>
<p id="board-status" role="status" aria-live="polite" class="muted"></p>
</section>
<section aria-labelledby="outcome-h" id="outcome" hidden>
<h2 id="outcome-h" tabindex="-1">Outcome</h2>
<p id="verdict"></p>
<div class="wrap" tabindex="0" role="region" aria-label="Votes"><table id="votes" class="stack" role="table">
<caption class="muted">Votes weighted by each member's boardroom weight; more than 50 for carries the motion.</caption>
<thead role="rowgroup"><tr role="row"><th scope="col" role="columnheader">Member</th><th scope="col" role="columnheader">Weight</th><th scope="col" role="columnheader">Vote</th><th scope="col" role="columnheader">Reason</th></tr></thead>
<tbody role="rowgroup"></tbody>
</table></div>
</section>`
  const script = `${clientScript}
$('convene-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const body = { company: $('company').value.trim(), motion: $('motion').value.trim() };
  if ($('model').value.trim()) body.model = $('model').value.trim();
  $('convene').disabled = true;
  say('board-status', 'The cabinet is deliberating…');
  try {
    const r = await api('/boardroom/convene', { method: 'POST', body });
    $('verdict').replaceChildren(h('strong', { class: r.carried ? 'ok' : 'error', text: r.carried ? 'Carried' : 'Not carried' }),
      ' — for ' + r.weight_for + ', against ' + r.weight_against + ', abstaining ' + r.weight_abstain + ' (model ' + r.model + ').');
    // a model's reason may be one long word: it breaks anywhere rather than widen the table
    $('votes').tBodies[0].replaceChildren(...r.votes.map((v) => h('tr', { role: 'row', 'data-role': v.role },
      h('th', { scope: 'row', role: 'rowheader', 'data-label': 'Member' }, h('code', { text: v.role })),
      h('td', { role: 'cell', 'data-label': 'Weight', text: String(v.weight) }),
      h('td', { role: 'cell', 'data-label': 'Vote', class: v.vote === 'for' ? 'ok' : v.vote === 'against' ? 'error' : 'warn', text: v.vote }),
      h('td', { role: 'cell', 'data-label': 'Reason', class: 'reason', text: v.reason }),
    )));
    $('outcome').hidden = false; $('outcome-h').focus();
    say('board-status', 'The cabinet of ' + r.company + ' voted.');
  } catch (e) {
    if (e.status === 404) {
      const guide = $('cabinet-guide');
      if (guide.tagName === 'DETAILS') guide.open = true;
      say('board-status', 'No cabinet for this company yet: ' + $('companies-note').textContent + ' How to get one is above.', true);
      guide.scrollIntoView();
    } else say('board-status', 'Could not convene: ' + message(e), true);
  } finally { $('convene').disabled = false; }
});
`
  return sessionPage('Boardroom', wallet, content, script)
}
