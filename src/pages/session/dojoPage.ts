import { sessionPage } from '../pages.js'
import { clientScript, sessionStyle } from './clientScript.js'

/**
 * `/dojo`: a chat playground. Talk to a marketplace agent (its model, its role as the system prompt) or to a
 * model directly. Replies stream token by token from `POST /llm/chat` with `stream: true` (NDJSON, one
 * `LlmChatChunk` per line, read as it arrives); "Stop" aborts the request, which stops the generation on the
 * model server. Each send is one cost call of the daily quota.
 */
export function dojoPage(wallet: string | undefined): string {
  const content = `${sessionStyle}
<section aria-labelledby="chat-h">
<h2 id="chat-h">Chat</h2>
<div class="row">
<div><label for="partner">Talk to</label><select id="partner"><option value="">Loading agents and models…</option></select></div>
<div><label for="temperature">Temperature</label><input id="temperature" type="number" min="0" max="2" step="0.1" value="0.7"></div>
</div>
<label for="prompt">Your message</label>
<textarea id="prompt" rows="3" placeholder="Ask something…"></textarea>
<button id="send" type="button">Send</button><button id="stop" type="button" class="secondary" disabled>Stop</button><button id="clear" type="button" class="secondary">Clear</button>
<p id="chat-status" role="status" class="muted"></p>
<div id="transcript" aria-live="polite"></div>
</section>`
  const script = `${clientScript}
const partners = new Map();
let history = [];
let controller = null;
async function loadPartners() {
  const [agents, models] = await Promise.allSettled([api('/agents'), api('/llm/v1/models')]);
  const options = [];
  if (agents.status === 'fulfilled') for (const a of agents.value.agents) {
    partners.set('agent:' + a.id, { model: a.model, system: 'You are ' + a.name + ' of the marketplace. ' + a.role });
    options.push(h('option', { value: 'agent:' + a.id, text: a.name + ' (agent, ' + a.model + ')' }));
  }
  if (models.status === 'fulfilled') for (const m of models.value.data) {
    partners.set('model:' + m.id, { model: m.id, system: null });
    options.push(h('option', { value: 'model:' + m.id, text: m.id + ' (model)' }));
  }
  $('partner').replaceChildren(...options);
  if (options.length === 0) say('chat-status', 'No agent or model is available right now.', true);
}
function bubble(role, text) {
  const body = h('div', { class: 'chat', text });
  const item = h('div', { class: 'turn', 'data-role': role }, h('strong', { text: role === 'user' ? 'You' : 'Reply' }), body);
  $('transcript').append(item);
  return body;
}
async function send() {
  const prompt = $('prompt').value.trim();
  const partner = partners.get($('partner').value);
  if (!prompt || !partner) return;
  $('prompt').value = '';
  history.push({ role: 'user', content: prompt });
  bubble('user', prompt);
  const out = bubble('assistant', '');
  out.setAttribute('id', 'reply-' + history.length);
  controller = new AbortController();
  $('send').disabled = true; $('stop').disabled = false;
  say('chat-status', 'Thinking…');
  let reply = '';
  try {
    const messages = partner.system ? [{ role: 'system', content: partner.system }, ...history] : history;
    const temperature = Number($('temperature').value);
    const res = await api('/llm/chat', { method: 'POST', raw: true, signal: controller.signal, body: { model: partner.model, messages, stream: true, options: { temperature: Number.isFinite(temperature) ? temperature : 0.7, num_predict: 256 } } });
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffered = '';
    let last = null;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffered += decoder.decode(value, { stream: true });
      let nl;
      while ((nl = buffered.indexOf('\\n')) >= 0) {
        const line = buffered.slice(0, nl).trim();
        buffered = buffered.slice(nl + 1);
        if (!line) continue;
        const chunk = JSON.parse(line);
        if (chunk.error) throw new Error(chunk.error + (chunk.message ? ': ' + chunk.message : ''));
        reply += chunk.message.content;
        out.textContent = reply;
        say('chat-status', 'Streaming…');
        if (chunk.done) last = chunk;
      }
    }
    say('chat-status', last ? 'Done: ' + last.eval_count + ' tokens in ' + Math.round(last.total_duration_ms) + ' ms (' + last.done_reason + ').' : 'Done.');
  } catch (e) {
    if (e && e.name === 'AbortError') say('chat-status', 'Stopped.');
    else say('chat-status', 'The chat failed: ' + message(e), true);
  } finally {
    if (reply) history.push({ role: 'assistant', content: reply });
    out.dataset.done = 'true';
    controller = null;
    $('send').disabled = false; $('stop').disabled = true;
  }
}
$('send').addEventListener('click', send);
$('prompt').addEventListener('keydown', (e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) send(); });
$('stop').addEventListener('click', () => controller && controller.abort());
$('clear').addEventListener('click', () => { history = []; $('transcript').replaceChildren(); say('chat-status', ''); });
loadPartners().catch((e) => say('chat-status', message(e), true));
`
  return sessionPage('Dojo', wallet, content, script)
}
