// The chat page. It holds a copy of the chat state, applies the host's events with the
// same reducer as the host (src/core/chat-state.ts) and draws what changed, at most once
// per animation frame however fast the deltas come.

import './style.css';
import type { ChannelInfo } from '../core/protocol.generated';
import { initialState, type ChatState } from '../core/chat-state';
import { fromMessage } from '../core/transcript';
import { applyOnPage, type HostMessage } from '../shared/webview-messages';
import { Composer } from './composer';
import { errorText, type ViewContext } from './context';
import { h } from './dom';
import { Header } from './header';
import { Host } from './host';
import { startHighlighter } from './highlighter';
import { warmUp } from './markdown';
import { PermissionDock } from './permission-card';
import { rewindFiles } from './rewind-dialog';
import { StatusLine } from './status-line';
import { TranscriptView } from './transcript-view';
import { ViewState } from './view-state';

const host = new Host();
const view = new ViewState(host);
// The page's copy lists the entries each event changed: the transcript redraws those alone.
let state: ChatState = { ...initialState(), changed: [] };
let info: ChannelInfo | null = null;

/** What views left to draw in the next frame (ctx.nextFrame). */
const nextFrame: (() => void)[] = [];

const toasts = h('div', { class: 'toasts', attrs: { 'aria-live': 'polite' } });

const ctx: ViewContext = {
  request: host.request,
  view,
  state: () => state,
  info: () => info,
  toast(text, level = 'info') {
    const toast = h('div', { class: `toast ${level}`, text, attrs: { role: level === 'error' ? 'alert' : 'status' } });
    toasts.append(toast);
    setTimeout(() => toast.remove(), 6000);
  },
  rewind: (messageId) => void rewindFiles(ctx, messageId),
  nextFrame(more) {
    nextFrame.push(more);
    scheduleRender();
  },
};

const header = new Header(ctx);
const transcript = new TranscriptView(ctx);
const status = new StatusLine(ctx);
const permissions = new PermissionDock(ctx);
const composer = new Composer(ctx, () => status.interrupt(), header.pickers);

const app = document.getElementById('app')!;
app.append(header.el, transcript.el, h('div', { class: 'bottom' }, status.el, permissions.el, composer.el), toasts);
// Once the page is first idle (its first chat drawn): starting the worker and evaluating
// highlight.js took CPU from the first frames on a busy machine, for colours that can wait.
const highlighterUri = app.dataset.highlighter;
if (highlighterUri) requestIdleCallback(() => startHighlighter(highlighterUri), { timeout: 2000 });

/** The entries of pages of older entries applied since the last frame: drawn above the others. */
let olderIds: string[] = [];

let frame = 0;
function render(): void {
  frame = 0;
  if (olderIds.length) {
    transcript.placeOlder(state, olderIds);
    olderIds = [];
  }
  transcript.update(state);
  header.update(state, info);
  status.update(state);
  permissions.update(state);
}
function scheduleRender(): void {
  frame ||= requestAnimationFrame(onFrame);
}

// A frame: first what views left to draw in it (a long answer's next slice), then what
// changed.
function onFrame(): void {
  for (const more of nextFrame.splice(0)) more();
  render();
  // What those left for the frame after (render() let go of this frame's request).
  if (nextFrame.length) scheduleRender();
}

function remember(): void {
  // The host restores a reloaded panel's chat from these.
  if (!state.sessionId || !state.cwd) return;
  // The model chosen (the channel's), else the one Claude named; '' for none of them.
  const model = info?.model || state.status.model || '';
  // The mode the chat runs in (its last status, else the channel's), not the setting's.
  const permissionMode = state.status.permissionMode ?? info?.permissionMode ?? '';
  const kept = { sessionId: state.sessionId, cwd: state.cwd, model, effort: info?.effort ?? '', permissionMode };
  const saved = view.current;
  if (Object.entries(kept).some(([key, value]) => saved[key as keyof typeof kept] !== value)) view.save(kept);
}

window.addEventListener('message', (event: MessageEvent<HostMessage>) => {
  const message = event.data;
  switch (message.type) {
    case 'reset':
      state = fromMessage(message.state);
      info = message.info;
      header.allowBypassPermissions = message.allowBypassPermissions;
      permissions.clear();
      olderIds = [];
      render();
      transcript.rebuild(state);
      remember();
      view.keepDiffs(state.files);
      break;
    case 'events':
      host.received();
      for (const sent of message.events) {
        const event = applyOnPage(state, sent);
        // The daemon's conversation replaced the chat's (an attach): drawn anew.
        if (event.kind === 'snapshot') {
          olderIds = [];
          transcript.rebuild(state);
        }
        if (event.kind === 'olderPage') olderIds.push(...event.entries.map((e) => e.id));
        if (
          event.kind === 'bound' ||
          event.kind === 'stored' ||
          (event.kind === 'notification' && event.method === 'claude/status')
        ) {
          remember();
        }
        if (event.kind === 'notification' && event.method === 'claude/fileUpdated') {
          view.keepDiffs([event.params]);
        }
      }
      scheduleRender();
      break;
    case 'info':
      info = message.info;
      remember();
      scheduleRender();
      break;
    case 'response':
      host.settle(message);
      break;
    case 'insertPrompt':
      composer.insert(message.text, message.send);
      break;
    case 'focusPrompt':
      composer.focus();
      break;
  }
});

// Copy buttons of code blocks, in every markdown block now and later.
document.addEventListener('click', (event) => {
  const target = event.target as HTMLElement;
  const copy = target.closest('.copy-code');
  if (copy) {
    const code = copy.closest('.code-block')?.querySelector('pre')?.textContent ?? '';
    void navigator.clipboard.writeText(code).then(
      () => {
        copy.textContent = 'Copied';
        setTimeout(() => (copy.textContent = 'Copy'), 1500);
      },
      () => ctx.toast('Could not copy to the clipboard', 'error'),
    );
    return;
  }
  // A link to a file of the workspace opens in an editor; web links are VS Code's to open.
  const link = target.closest('a');
  const href = link?.getAttribute('href') ?? '';
  if (link && href && !/^[a-z][a-z0-9+.-]*:/i.test(href) && !href.startsWith('#')) {
    event.preventDefault();
    const [path, line] = decodeURIComponent(href).split('#L');
    void ctx
      .request('openFile', line ? { path: path ?? href, line: Number(line) } : { path: path ?? href })
      .catch((e: unknown) => ctx.toast(errorText(e), 'error'));
  }
});

window.addEventListener('error', (event) => host.log('error', `${event.message} (${event.filename}:${event.lineno})`));
window.addEventListener('unhandledrejection', (event) => host.log('error', String(event.reason)));

// The host enables the chat's keybindings (claudeSidecar.chatFocused) only while the page has
// the focus: the tab may stay the active editor while the user types in the terminal. Also
// polled, as VS Code's own webview frame does (pre/index.html): blur is not reliable across
// its nested frames.
let hadFocus = false;
function trackFocus(): void {
  const now = document.hasFocus();
  if (now === hadFocus) return;
  hadFocus = now;
  host.focused(now);
}
window.addEventListener('focus', trackFocus);
window.addEventListener('blur', trackFocus);
setInterval(trackFocus, 250);

// No focus of its own at start: a page that took it would make its tab's group the active
// one, so after a window reload the tab restored last would win over the one the user was
// in. The host says when the prompt should have it (focusPrompt).
host.ready();
trackFocus();
warmUp();
