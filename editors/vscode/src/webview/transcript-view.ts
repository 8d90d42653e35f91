// The scrolling transcript. Renders incrementally: each entry's view is made once and
// updated only when the entry's rev moved, and a frame visits only the entries the state
// lists as changed since the last (takeChanged), so a delta touches one element and a page
// placed above costs that page, not the entries drawn before it; a new entry's
// view goes where the entry is (after the others, or before the running turn for a notice
// about it; a reset rebuilds). A sub-agent's entries go into their Agent/Task call's view. Follows the end while the user is at the end, and
// keeps their place when they scrolled up.
//
// A long chat is windowed (paged by the daemon, feature transcriptPaging): only the pages
// read are in the DOM, the last first; as the user nears the top the page asks the host for
// the page before (one request at a time, none once the first entry is shown), draws it
// above and puts the entry the user was looking at back where it was on screen. The
// conversation's entries are drawn in chunks of CHUNK (the list's children): a chunk out of
// view is neither laid out nor painted (`content-visibility: auto` in style.css; the browser
// keeps the height it had when last drawn), so what a change costs the browser grows with
// the chunks, not with the entries (per entry, thousands of them cost the browser hundreds of
// milliseconds per page drawn above: its per-element visibility checks and paint walk).

import type { ChatState } from '../core/chat-state';
import { positionOf, takeChanged, type Entry } from '../core/transcript';
import { errorText, type ViewContext } from './context';
import { h } from './dom';
import type { EntryView } from './entry-view';
import { entryView } from './entry-views';

/** Closer than this to the end counts as "at the end". */
const END_SLACK = 24;

/** The page before is asked for when fewer than this many screens are left above the view. */
const SCREENS_LEFT_ABOVE = 1;

/** Entries of the conversation per chunk of the list (a page read above makes chunks of its own). */
const CHUNK = 50;

function chunk(): HTMLElement {
  return h('div', { class: 'chunk' });
}

export class TranscriptView {
  readonly el: HTMLElement;
  private readonly list = h('div', {
    class: 'entries',
    attrs: { role: 'log', 'aria-live': 'polite', 'aria-label': 'Conversation' },
  });
  private readonly queued = h('div', { class: 'queued' });
  /** Above the entries while older ones are left to read: says when a page of them is on its
   * way. Always there until the first entry is drawn, so that it moves nothing when it says so. */
  private readonly olderRow = h('div', { class: 'older-row', attrs: { role: 'status' } });
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
  /** Entries drawn in the list because their Agent/Task call is in a page not read yet, by that call's id. */
  private readonly orphans = new Map<string, string[]>();
  /** The page asked for the page before, and has no answer yet. */
  private asking = false;

  constructor(private readonly ctx: ViewContext) {
    this.olderRow.hidden = true;
    this.el = h('div', { class: 'transcript' }, this.olderRow, this.empty, this.list, this.queued);
    this.el.addEventListener(
      'scroll',
      () => {
        this.following = this.el.scrollHeight - this.el.scrollTop - this.el.clientHeight < END_SLACK;
        ctx.view.update({ scrollTop: this.following ? null : this.el.scrollTop });
        this.loadOlderNearTop();
      },
      { passive: true },
    );
    // Entries drawn for the first time take their height after the frame they were added in
    // (content-visibility): the end stays in view while the user follows it.
    new ResizeObserver(() => {
      if (this.following) this.scrollToEnd();
    }).observe(this.list);
  }

  /** Drops every view and draws the state anew, at the saved scroll position. */
  rebuild(state: ChatState): void {
    this.views.clear();
    this.orphans.clear();
    this.list.replaceChildren();
    this.queuedKey = '';
    // Every entry is drawn: from here on the state lists the entries that change (a state
    // from the host has no list: the page's own copy starts it).
    state.changed = [];
    this.draw(state, state.entries, true);
    this.update(state);
    const saved = this.ctx.view.current.scrollTop;
    this.following = saved === null;
    if (saved === null) this.scrollToEnd();
    else this.el.scrollTop = saved;
  }

  /** Draws what changed since the last update (the entries the state lists as changed). */
  update(state: ChatState): void {
    this.draw(state, takeChanged(state));
    const queuedKey = state.queued.map((q) => `${q.id}@${state.revs[q.id] ?? 0}`).join(',');
    if (queuedKey !== this.queuedKey) {
      this.queuedKey = queuedKey;
      this.queued.replaceChildren(...state.queued.map((q) => entryView(q, this.ctx).el));
    }
    this.empty.hidden = state.entries.length > 0 || state.queued.length > 0;
    this.showOlder(state);
    if (this.following) this.scrollToEnd();
    this.loadOlderNearTop();
  }

  /** Updates the views of `entries` (in the conversation's order) whose rev moved, and makes
   * those of the ones not drawn yet where they go (`fresh`: no view is drawn after them). */
  private draw(state: ChatState, entries: readonly Entry[], fresh = false): void {
    for (const entry of entries) {
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
      const container = this.containerOf(entry);
      // Before the view of the next entry already drawn in the same place, if any (none
      // when every entry is drawn afresh, in order).
      const next = fresh ? null : this.nextDrawn(state, entry.id, container);
      if (container !== this.list) container.insertBefore(view.el, next);
      else if (next) next.parentElement!.insertBefore(view.el, next);
      else this.append(view.el);
    }
  }

  /**
   * Draws pages of older entries the chat placed (`ids`, the olderPage events' entries)
   * above the entries drawn, the entry at the top of the view staying where it is on screen.
   * An entry drawn already moves to its place in the page; the entries of an Agent/Task
   * call drawn before their call's page was read move into its view.
   */
  placeOlder(state: ChatState, ids: readonly string[]): void {
    const position = (id: string) => positionOf(state, id) ?? -1;
    const page = ids.filter((id) => id in state.at).sort((a, b) => position(a) - position(b));
    if (!page.length) return;
    const anchor = this.anchor();
    this.showOlder(state);
    const tops: HTMLElement[] = [];
    const calls: string[] = [];
    let moved = false;
    for (const id of page) {
      const entry = state.entries[position(id)]!;
      const rev = state.revs[id] ?? 0;
      let drawn = this.views.get(id);
      moved ||= drawn !== undefined;
      if (!drawn) {
        drawn = { view: entryView(entry, this.ctx), rev };
        this.views.set(id, drawn);
      } else if (drawn.rev !== rev) {
        drawn.view.update(entry);
        drawn.rev = rev;
      }
      if (drawn.view.children) calls.push(id);
      const container = this.containerOf(entry);
      if (container === this.list) tops.push(drawn.view.el);
      else container.append(drawn.view.el);
    }
    const next = this.nextDrawn(state, page.at(-1)!, this.list);
    if (next?.previousElementSibling) {
      // Within a chunk (entries of the page were drawn already): in it, before the next one.
      next.before(...tops);
    } else {
      const before = next?.parentElement ?? null;
      for (let i = 0; i < tops.length; i += CHUNK) {
        const made = chunk();
        made.append(...tops.slice(i, i + CHUNK));
        this.list.insertBefore(made, before);
      }
    }
    // Chunks whose entries all moved into the page (none when the page is all new: the usual
    // case, which then costs the page alone, not the chunks drawn).
    if (moved) for (const left of [...this.list.children]) if (!left.childElementCount) left.remove();
    for (const id of calls) this.adopt(state, id);
    if (anchor) this.el.scrollTop += anchor.el.getBoundingClientRect().top - anchor.top;
  }

  /** The row above the entries as the state says: older entries left, a page of them on its way. */
  private showOlder(state: ChatState): void {
    const { more, loading } = state.older;
    this.olderRow.hidden = !more && !loading;
    const text = loading ? 'Loading earlier messages…' : 'Earlier messages: scroll up to load them';
    if (this.olderRow.textContent !== text) this.olderRow.textContent = text;
    this.olderRow.classList.toggle('loading', loading);
  }

  /** Where an entry's view goes: its Agent/Task call's view, or the list (noted when the call is not drawn yet). */
  private containerOf(entry: Entry): HTMLElement {
    const parentId = entry.kind === 'restoredFile' ? null : entry.parentId;
    if (!parentId) return this.list;
    const parent = this.views.get(parentId)?.view.children;
    if (parent) return parent;
    const waiting = this.orphans.get(parentId) ?? [];
    if (!waiting.includes(entry.id)) waiting.push(entry.id);
    this.orphans.set(parentId, waiting);
    return this.list;
  }

  /** Moves the entries drawn before their Agent/Task call `id` into its view, in order. */
  private adopt(state: ChatState, id: string): void {
    const waiting = this.orphans.get(id);
    const children = this.views.get(id)?.view.children;
    if (!waiting || !children) return;
    this.orphans.delete(id);
    waiting.sort((a, b) => (positionOf(state, a) ?? 0) - (positionOf(state, b) ?? 0));
    for (const child of waiting) {
      const el = this.views.get(child)?.view.el;
      if (el) children.append(el);
    }
  }

  /** Adds a view of the conversation after the others: to the last chunk, or a new one when it is full. */
  private append(el: HTMLElement): void {
    let last = this.list.lastElementChild;
    if (!last || last.childElementCount >= CHUNK) {
      last = chunk();
      this.list.append(last);
    }
    last.append(el);
  }

  /** The first entry in view and where its top is on screen (found by halving, chunks then entries). */
  private anchor(): { el: Element; top: number } | undefined {
    const viewTop = this.el.getBoundingClientRect().top;
    const firstInView = (items: HTMLCollection): Element | undefined => {
      let low = 0;
      let high = items.length - 1;
      while (low < high) {
        const mid = (low + high) >> 1;
        if (items[mid]!.getBoundingClientRect().bottom <= viewTop) low = mid + 1;
        else high = mid;
      }
      return items[low];
    };
    const inView = firstInView(this.list.children);
    const el = inView ? (firstInView(inView.children) ?? inView) : undefined;
    return el && { el, top: el.getBoundingClientRect().top };
  }

  /** Asks the host for the page before the entries drawn when the view is near their top:
   * not while a page is on its way, and not once the first entry is drawn. */
  private loadOlderNearTop(): void {
    const { more, loading } = this.ctx.state().older;
    if (!more || loading || this.asking) return;
    if (this.el.scrollTop > this.el.clientHeight * SCREENS_LEFT_ABOVE) return;
    this.asking = true;
    this.ctx
      .request('loadOlder', {})
      .catch((e: unknown) => this.ctx.toast(`Earlier messages: ${errorText(e)}`, 'error'))
      .finally(() => {
        this.asking = false;
        // The page came before this answer and is drawn in the next frame (or was, before
        // the answer came): once it is, the view may still be near the top, and no scroll
        // event will say so.
        requestAnimationFrame(() => this.loadOlderNearTop());
      });
  }

  /** The element of the first entry after `id` whose view is drawn in `container` (the list:
   * in one of its chunks); null when none is. */
  private nextDrawn(state: ChatState, id: string, container: HTMLElement): Element | null {
    for (let i = (positionOf(state, id) ?? state.entries.length) + 1; i < state.entries.length; i++) {
      const el = this.views.get(state.entries[i]!.id)?.view.el;
      const parent = container === this.list ? el?.parentElement?.parentElement : el?.parentElement;
      if (el && parent === container) return el;
    }
    return null;
  }

  scrollToEnd(): void {
    this.el.scrollTop = this.el.scrollHeight;
  }
}
