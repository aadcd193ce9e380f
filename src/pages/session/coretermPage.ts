import { sessionPage } from '../pages.js'
import { clientScript, sessionStyle } from './clientScript.js'

/**
 * `/coreterm/`: a terminal-style prompt to the core agent (`POST /coreagent/interact`; each line is one cost
 * call). Commands: `/agent <id>` picks the agent, `/remember <text>` logs a memory (`POST /coreagent/memories`),
 * `/recall <query>` searches memories (`POST /coreagent/memories/search`), `/clear`, `/help`. Arrow keys walk
 * the command history.
 */
export function coretermPage(wallet: string | undefined): string {
  const content = `${sessionStyle}
<section aria-labelledby="term-h">
<h2 id="term-h">Core terminal</h2>
<div id="screen" class="term" role="log" aria-live="polite" tabindex="0" aria-label="Terminal output">Type /help for commands.\n</div>
<form id="term-form"><label for="line">Command or prompt for <span id="agent-name">ceo</span></label>
<input id="line" autocomplete="off" spellcheck="false" placeholder="Ask the core agent…"></form>
</section>`
  const script = `${clientScript}
let agent = 'ceo';
const past = []; let cursor = 0;
const print = (text, cls) => { const line = h('div', { class: cls || '', text }); $('screen').append(line); $('screen').scrollTop = $('screen').scrollHeight; };
const HELP = '/agent <id>   talk to another agent (ceo, mastermind, analyst, archivist, sentinel)\\n/remember <text>   log a memory\\n/recall <query>   search memories\\n/clear   clear the screen\\nanything else   a prompt for the agent';
async function run(line) {
  print('$ ' + line);
  const [cmd, ...rest] = line.split(' ');
  const arg = rest.join(' ').trim();
  try {
    if (cmd === '/help') print(HELP, 'muted');
    else if (cmd === '/clear') $('screen').replaceChildren();
    else if (cmd === '/agent') { if (!/^[a-z][a-z0-9_-]*$/.test(arg)) throw new Error('usage: /agent <id>'); agent = arg; $('agent-name').textContent = agent; print('now talking to ' + agent, 'muted'); }
    else if (cmd === '/remember') { const r = await api('/coreagent/memories', { method: 'POST', body: { text: arg, agent } }); print('remembered ' + r.memory_id, 'ok'); }
    else if (cmd === '/recall') { const r = await api('/coreagent/memories/search', { method: 'POST', body: { query: arg } }); const hits = r.memories; print(hits.length ? hits.map((m) => '• ' + (m.text || JSON.stringify(m))).join('\\n') : 'nothing recalled', 'muted'); }
    else {
      print('… ' + agent + ' is thinking', 'muted');
      const r = await api('/coreagent/interact', { method: 'POST', body: { agent, prompt: line } });
      print(r.agent + '> ' + r.response);
      if (r.recalled.length) print('(recalled ' + r.recalled.length + ' memories)', 'muted');
    }
  } catch (e) { print('error: ' + message(e), 'error'); }
}
$('term-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const line = $('line').value.trim();
  if (!line) return;
  past.push(line); cursor = past.length; $('line').value = '';
  run(line);
});
$('line').addEventListener('keydown', (e) => {
  if (e.key === 'ArrowUp' && cursor > 0) { cursor--; $('line').value = past[cursor]; e.preventDefault(); }
  if (e.key === 'ArrowDown') { cursor = Math.min(past.length, cursor + 1); $('line').value = past[cursor] || ''; e.preventDefault(); }
});
$('line').focus();
`
  return sessionPage('Core terminal', wallet, content, script)
}
