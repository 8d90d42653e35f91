// The scrolling transcript. Renders incrementally: each entry's view is made once and
// updated only when the entry's rev moved, so a delta touches one element; a new entry's
// view goes where the entry is (after the others, or before the running turn for a notice
// about it; a reset rebuilds). A sub-agent's entries go into their Agent/Task call's view. Follows the end while the user is at the end, and
// keeps their place when they scrolled up.

import type { ChatState } from '../core/chat-state';
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
  /** The views of the entries drawn, by entry id, with the rev each shows. */
  private views = new Map<string, { view: EntryView; rev: number }>();
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
      const rev = state.revs[entry.id] ?? 0;
      const known = this.views.get(entry.id);
      if (known) {
        if (known.rev !== rev) {
          known.view.update(entry);
          known.rev = rev;
        }
        continue;
      }
      const view = entryView(entry, this.ctx);
      this.views.set(entry.id, { view, rev });
      const parentId = entry.kind === 'restoredFile' ? null : entry.parentId;
      const parent = parentId ? this.views.get(parentId)?.view.children : undefined;
      const container = parent ?? this.list;
      // Before the view of the next entry already drawn in the same place, if any.
      container.insertBefore(view.el, this.nextDrawn(state, entry.id, container));
    }
    const queuedKey = state.queued.map((q) => `${q.id}@${state.revs[q.id] ?? 0}`).join(',');
    if (queuedKey !== this.queuedKey) {
      this.queuedKey = queuedKey;
      this.queued.replaceChildren(...state.queued.map((q) => entryView(q, this.ctx).el));
    }
    this.empty.hidden = state.entries.length > 0 || state.queued.length > 0;
    if (this.following) this.scrollToEnd();
  }

  /** The element of the first entry after `id` whose view is drawn in `container`; null when none is. */
  private nextDrawn(state: ChatState, id: string, container: HTMLElement): Element | null {
    for (let i = (state.at[id] ?? state.entries.length) + 1; i < state.entries.length; i++) {
      const el = this.views.get(state.entries[i]!.id)?.view.el;
      if (el?.parentElement === container) return el;
    }
    return null;
  }

  scrollToEnd(): void {
    this.el.scrollTop = this.el.scrollHeight;
  }
}
