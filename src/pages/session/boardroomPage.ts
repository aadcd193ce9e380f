import { sessionPage } from '../pages.js'
import { clientScript, sessionStyle } from './clientScript.js'

/**
 * `/boardroom`: convene a company's cabinet on a motion (`POST /boardroom/convene`, one cost call) and show
 * the outcome: carried or not, the weight for / against / abstaining, and each member's vote, weight and reason.
 */
export function boardroomPage(wallet: string | undefined): string {
  const content = `${sessionStyle}
<section aria-labelledby="motion-h">
<h2 id="motion-h">Put a motion to the cabinet</h2>
<form id="convene-form">
<div class="row">
<div><label for="company">Company</label><input id="company" required pattern="[A-Za-z0-9][A-Za-z0-9_\\-]{0,63}" value="ACME" autocomplete="off"></div>
<div><label for="model">Model (optional)</label><input id="model" placeholder="default chat model" autocomplete="off"></div>
</div>
<label for="motion">Motion</label>
<textarea id="motion" rows="3" required maxlength="2000">Raise the storage markup from 25% to 30%.</textarea>
<button id="convene" type="submit">Convene</button>
</form>
<p id="board-status" role="status" aria-live="polite" class="muted"></p>
</section>
<section aria-labelledby="outcome-h" id="outcome" hidden>
<h2 id="outcome-h" tabindex="-1">Outcome</h2>
<p id="verdict"></p>
<div class="wrap"><table id="votes">
<caption class="muted">Votes weighted by each member's boardroom weight; more than 50 for carries the motion.</caption>
<thead><tr><th scope="col">Member</th><th scope="col">Weight</th><th scope="col">Vote</th><th scope="col">Reason</th></tr></thead>
<tbody></tbody>
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
    $('votes').tBodies[0].replaceChildren(...r.votes.map((v) => h('tr', { 'data-role': v.role },
      h('th', { scope: 'row' }, h('code', { text: v.role })),
      h('td', { text: String(v.weight) }),
      h('td', { class: v.vote === 'for' ? 'ok' : v.vote === 'against' ? 'error' : 'warn', text: v.vote }),
      h('td', { text: v.reason }),
    )));
    $('outcome').hidden = false; $('outcome-h').focus();
    say('board-status', 'The cabinet of ' + r.company + ' voted.');
  } catch (e) {
    say('board-status', (e.status === 404 ? 'No cabinet for this company yet (an administrator provisions it on /cabinet). ' : 'Could not convene: ') + message(e), true);
  } finally { $('convene').disabled = false; }
});
`
  return sessionPage('Boardroom', wallet, content, script)
}
