import { sessionPage } from '../pages.js'
import { clientScript, sessionStyle } from './clientScript.js'

/** `/feedback.html`: a form whose message is stored as a `feedback.submitted` catalogue event (`POST /feedback`). */
export function feedbackPage(wallet: string | undefined): string {
  const content = `${sessionStyle}
<section aria-labelledby="fb-h">
<h2 id="fb-h">Tell us what works and what does not</h2>
<form id="feedback-form">
<label for="message">Your feedback</label>
<textarea id="message" rows="5" required maxlength="4000"></textarea>
<div class="row">
<div><label for="about">About the page (optional)</label><input id="about" placeholder="/storage/" pattern="/[\\x21-\\x7E]*" maxlength="200" autocomplete="off"></div>
<div><label for="rating">Rating (optional)</label><select id="rating"><option value="">—</option><option>5</option><option>4</option><option>3</option><option>2</option><option>1</option></select></div>
</div>
<button id="send" type="submit">Send feedback</button>
</form>
<p id="fb-status" role="status" aria-live="polite" class="muted"></p>
<p class="muted">Feedback is kept in the catalogue, readable on <a href="/insight/">Insight</a>. Plain text: <a href="/feedback.txt">feedback.txt</a>.</p>
</section>`
  const script = `${clientScript}
$('feedback-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const body = { message: $('message').value.trim() };
  if ($('about').value.trim()) body.page = $('about').value.trim();
  if ($('rating').value) body.rating = Number($('rating').value);
  if (!body.message) { say('fb-status', 'Write a message first.', true); return; }
  $('send').disabled = true;
  try {
    const r = await api('/feedback', { method: 'POST', body });
    $('message').value = '';
    say('fb-status', 'Thank you — stored as event ' + r.event_id + '.');
  } catch (e) { say('fb-status', 'Could not send: ' + message(e), true); }
  finally { $('send').disabled = false; }
});
`
  return sessionPage('Feedback', wallet, content, script)
}
