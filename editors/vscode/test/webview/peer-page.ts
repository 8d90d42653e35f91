// The peer of the chat page in VS Code (test/vscode/page-bench.mjs --peer): in the same
// webview, fed by the same extension host and per-frame feed, the cheapest page that shows
// the chat: each streamed delta appended as a plain text node to its answer's element, the
// end followed once a frame, a prompt box that sends what is typed. No markdown, no
// windowing, no header or status: the practical limit of drawing a stream in VS Code's
// webview on the machine the bench runs on, measured beside the page in the same run.
// Bundled by the bench in place of dist/webview.js.

import type { ChatEvent } from '../../src/core/chat-state';
import type { HostMessage, WebviewMessage } from '../../src/shared/webview-messages';

declare function acquireVsCodeApi(): { postMessage(message: WebviewMessage): void };

const vscode = acquireVsCodeApi();

const transcript = document.createElement('div');
transcript.className = 'transcript';
Object.assign(transcript.style, {
  position: 'absolute',
  inset: '0 0 88px 0',
  overflowY: 'auto',
  padding: '8px 12px',
  whiteSpace: 'pre-wrap',
});
const prompt = document.createElement('textarea');
prompt.className = 'prompt';
Object.assign(prompt.style, { position: 'absolute', left: '12px', right: '12px', bottom: '12px', height: '64px' });
document.body.append(transcript, prompt);

let requests = 0;
prompt.addEventListener('keydown', (event) => {
  if (event.key !== 'Enter' || event.shiftKey) return;
  event.preventDefault();
  vscode.postMessage({ type: 'request', id: ++requests, op: 'send', params: { text: prompt.value } });
  prompt.value = '';
});

/** Each entry's element, by id. */
const shown = new Map<string, HTMLElement>();

function elementOf(id: string, className: string): HTMLElement {
  let el = shown.get(id);
  if (!el) {
    el = document.createElement('div');
    el.className = className;
    transcript.append(el);
    shown.set(id, el);
  }
  return el;
}

let following = 0;
/** Follows the end, once a frame. */
function follow(): void {
  following ||= requestAnimationFrame(() => {
    following = 0;
    transcript.scrollTop = transcript.scrollHeight;
  });
}

/** Shows `event`; `textKept`: an entry's text left out, the page's deltas made it (page-feed.ts). */
function show(event: ChatEvent, textKept: boolean): void {
  if (event.kind !== 'notification') return;
  if (event.method === 'claude/delta') {
    const { entryId, kind, text } = event.params;
    if (kind === 'text' && entryId) elementOf(entryId, 'entry text streaming').append(text);
  } else if (event.method === 'claude/entry') {
    const entry = event.params.entry;
    if (entry.kind === 'prompt') elementOf(entry.id, 'entry user').textContent = entry.text;
    else if (entry.kind === 'turn') elementOf(entry.id, 'entry turn').textContent = 'Done';
    else if (entry.kind === 'text') {
      const el = elementOf(entry.id, 'entry text streaming');
      if (!textKept && el.textContent !== entry.text) el.textContent = entry.text;
      if (!entry.streaming) el.classList.remove('streaming');
    }
  }
  follow();
}

window.addEventListener('message', (message: MessageEvent<HostMessage>) => {
  const data = message.data;
  if (data.type !== 'events') return;
  // The feed sends its next message once the page took this one.
  vscode.postMessage({ type: 'received' });
  for (const sent of data.events) show(sent.event, sent.textKept === true);
});

vscode.postMessage({ type: 'ready' });
