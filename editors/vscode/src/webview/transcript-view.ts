// The scrolling transcript. Renders incrementally: each entry's view is made once and
// updated only when the entry's `rev` moved, so a delta touches one element; entries are
// only ever appended (a history or a reset rebuilds). Follows the end while the user is
// at the end, and keeps their place when they scrolled up.

import type { ChatState } from '../core/transcript';
import type { ViewContext } from './context';
import { h } from './dom';
import type { EntryView } from './entry-view';
import { entryView } from './entry-views';

/** Closer than this to the end counts as "at the end". */
const END_SLACK = 24;

export class TranscriptView {
  readonly el: HTMLElement;
  private readonly list = h('div', {
    class: 'entries',
    attrs: { role: 'log', 'aria-live': 'polite', 'aria-label': 'Conversation' },
  });
  private readonly queued = h('div', { class: 'queued' });
  private readonly empty = h(
    'div',
    { class: 'empty' },
    h('div', { class: 'empty-title', text: 'What can Claude do for you?' }),
    h('div', { class: 'empty-hint', text: 'Type @ to mention a file, / for commands. Paste or drop images.' }),
  );
  private views = new Map<number, { view: EntryView; rev: number }>();
  /** Containers of sub-agent output, by the Agent/Task call's tool use id. */
  private subAgents = new Map<string, HTMLElement>();
  private queuedKey = '';
  private following = true;

  constructor(private readonly ctx: ViewContext) {
    this.el = h('div', { class: 'transcript' }, this.empty, this.list, this.queued);
    this.el.addEventListener(
      'scroll',
      () => {
        this.following = this.el.scrollHeight - this.el.scrollTop - this.el.clientHeight < END_SLACK;
        ctx.view.update({ scrollTop: this.following ? null : this.el.scrollTop });
      },
      { passive: true },
    );
  }

  /** Drops every view and draws the state anew, at the saved scroll position. */
  rebuild(state: ChatState): void {
    this.views.clear();
    this.subAgents.clear();
    this.list.replaceChildren();
    this.queuedKey = '';
    this.update(state);
    const saved = this.ctx.view.current.scrollTop;
    this.following = saved === null;
    if (saved === null) this.scrollToEnd();
    else this.el.scrollTop = saved;
  }

  update(state: ChatState): void {
    for (const entry of state.entries) {
      const known = this.views.get(entry.id);
      if (known) {
        if (known.rev !== entry.rev) {
          known.view.update(entry);
          known.rev = entry.rev;
        }
        continue;
      }
      const view = entryView(entry, this.ctx);
      this.views.set(entry.id, { view, rev: entry.rev });
      if (view.children && entry.kind === 'tool') this.subAgents.set(entry.toolUseId, view.children);
      const parent = entry.parentToolUseId ? this.subAgents.get(entry.parentToolUseId) : undefined;
      (parent ?? this.list).append(view.el);
    }
    const queuedKey = state.queued.map((q) => q.id).join(',');
    if (queuedKey !== this.queuedKey) {
      this.queuedKey = queuedKey;
      this.queued.replaceChildren(...state.queued.map((q) => entryView(q, this.ctx, true).el));
    }
    this.empty.hidden = state.entries.length > 0 || state.queued.length > 0;
    if (this.following) this.scrollToEnd();
  }

  scrollToEnd(): void {
    this.el.scrollTop = this.el.scrollHeight;
  }
}
