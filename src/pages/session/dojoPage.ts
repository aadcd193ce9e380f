import { scriptJson } from '../html.js'
import { sessionPage } from '../pages.js'
import { clientScript, sessionStyle } from './clientScript.js'

/**
 * `/dojo`: a chat playground. Talk to a marketplace agent (its model, its role as the system prompt) or to a
 * model directly. Replies stream token by token from `POST /llm/chat` with `stream: true` (NDJSON, one
 * `LlmChatChunk` per line, read as it arrives); "Stop" aborts the request, which stops the generation on the
 * model server. Each send is one cost call of the daily quota.
 *
 * "Talk to" offers each partner that can chat once: the agents (`GET /agents`, those with the `chat`
 * capability on a chat model) and the models of `GET /llm/v1/models` that are in `chatModels` (canonical names
 * whose `/api/show` lists `completion`; `null` when the server could not tell, then every model is offered).
 * The agents also appear in that list as model names (`owned_by: pay2store-agent`); they are offered once, as agents.
 */
export function dojoPage(wallet: string | undefined, chatModels: readonly string[] | null = null): string {
  const content = `${sessionStyle}
<style>
#transcript{display:flex;flex-direction:column;gap:10px;margin-top:8px}
.turn{display:flex;flex-direction:column;align-items:flex-start;max-width:min(80ch,90%)}
.turn[data-role="user"]{align-self:flex-end;align-items:flex-end}
.turn .who{font-size:.85rem;color:#9aa3b2;margin-bottom:2px}
.turn .chat{min-height:0;max-width:100%;overflow-wrap:anywhere}
.turn[data-role="user"] .chat{background:#1d3557}
.turn .chat:empty::before{content:'…';color:#9aa3b2}
.turn .chat.failed{color:#ff9b9b}
.note{background:#2a2410;border:1px solid #5c4a12;border-radius:6px;padding:8px 10px;margin:10px 0 0}
</style>
<section aria-labelledby="chat-h">
<h2 id="chat-h">Chat</h2>
<div class="row">
<div><label for="partner">Talk to</label><select id="partner" aria-describedby="test-model-note"><option value="">Loading agents and models…</option></select></div>
<div><label for="temperature">Temperature</label><input id="temperature" type="number" min="0" max="2" step="0.1" value="0.7"></div>
</div>
<p id="test-model-note" class="note" hidden>The built-in <code>svc-tiny-*</code> models are test models with random weights: their replies are gibberish by design. To talk to a real model, pull one (<code>pay2store models pull llama3.2:1b</code>) or import a GGUF file (<code>pay2store models create NAME --from FILE.gguf</code>) — see <a href="/book#doc-readme--run-a-real-model">Run a real model</a>.</p>
<label for="prompt">Your message</label>
<textarea id="prompt" rows="3" placeholder="Ask something…"></textarea>
<button id="send" type="button">Send</button><button id="stop" type="button" class="secondary" disabled>Stop</button><button id="clear" type="button" class="secondary">Clear</button>
<p id="chat-status" role="status" class="muted"></p>
<div id="transcript" aria-live="polite"></div>
</section>`
  const script = `${clientScript}
const CHAT_MODELS = ${scriptJson(chatModels)};
const partners = new Map();
let history = [];
let controller = null;
// Ollama's rule: a name without a tag is name:latest.
const canonical = (name) => (name.includes(':') ? name : name + ':latest');
const canChat = (model) => CHAT_MODELS === null || CHAT_MODELS.includes(canonical(model));
async function loadPartners() {
  const [agents, models] = await Promise.allSettled([api('/agents'), api('/llm/v1/models')]);
  const groups = [];
  const agentIds = new Set();
  if (agents.status === 'fulfilled') {
    const group = h('optgroup', { label: 'Agents' });
    for (const a of agents.value.agents) {
      agentIds.add(a.id);
      if (!a.capabilities.includes('chat') || !canChat(a.model)) continue;
      partners.set('agent:' + a.id, { model: a.model, system: 'You are ' + a.name + ' of the marketplace. ' + a.role });
      group.append(h('option', { value: 'agent:' + a.id, text: a.name + ' — agent on ' + a.model }));
    }
    if (group.children.length) groups.push(group);
  }
  if (models.status === 'fulfilled') {
    const group = h('optgroup', { label: 'Models' });
    for (const m of models.value.data) {
      // The agents are listed as model names too; they are offered once, above.
      if (m.owned_by === 'pay2store-agent' || agentIds.has(m.id) || !canChat(m.id)) continue;
      partners.set('model:' + m.id, { model: m.id, system: null });
      group.append(h('option', { value: 'model:' + m.id, text: m.id }));
    }
    if (group.children.length) groups.push(group);
  }
  $('partner').replaceChildren(...groups);
  showNote();
  if (partners.size === 0) say('chat-status', 'No agent or model that can chat is available right now.', true);
}
// The built-in models answer gibberish: say so whenever one of them is chosen.
function showNote() {
  const partner = partners.get($('partner').value);
  $('test-model-note').hidden = !(partner && /^svc-tiny-/.test(partner.model));
}
function bubble(role, text) {
  const body = h('div', { class: 'chat', text });
  const item = h('div', { class: 'turn', 'data-role': role }, h('strong', { class: 'who', text: role === 'user' ? 'You' : 'Reply' }), body);
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
    else {
      say('chat-status', 'The chat failed: ' + message(e), true);
      // The reply bubble says it too, instead of staying an empty box.
      if (!reply) { out.classList.add('failed'); out.textContent = 'No reply: ' + message(e); }
    }
  } finally {
    if (reply) history.push({ role: 'assistant', content: reply });
    out.dataset.done = 'true';
    controller = null;
    $('send').disabled = false; $('stop').disabled = true;
  }
}
$('send').addEventListener('click', send);
$('partner').addEventListener('change', showNote);
$('prompt').addEventListener('keydown', (e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) send(); });
$('stop').addEventListener('click', () => controller && controller.abort());
$('clear').addEventListener('click', () => { history = []; $('transcript').replaceChildren(); say('chat-status', ''); });
loadPartners().catch((e) => say('chat-status', message(e), true));
`
  return sessionPage('Dojo', wallet, content, script)
}
