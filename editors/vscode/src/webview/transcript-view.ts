// The scrolling transcript. Renders incrementally: each entry's view is made once and
// updated only when the entry's rev moved, and a frame visits only the entries the state
// lists as changed since the last (takeChanged), so a delta touches one element and a page
// placed above costs that page, not the entries drawn before it. A new entry's view goes
// where the entry is (after the others, or before the running turn for a notice about it; a
// reset rebuilds). A sub-agent's entries go into their Agent/Task call's view. Follows the
// end while the user is at the end, and keeps their place when they scrolled up.
//
// A long chat is paged by the daemon (feature transcriptPaging): the page holds the pages
// read, the last first; as the user nears the top it asks the host for the page before (one
// request at a time, none once the first entry is shown) and puts it above, the entry the
// user was looking at staying where it was on screen. The entries are placed in chunks
// (chunk-window.ts), of which only those near the view are drawn: the DOM holds a few
// chunks' entries however many were read, and a chunk coming back into view is drawn again
// (a block the user opened stays open: the page state remembers it).
//
// The page's copy of the chat state holds whole only the entries of the chunks near the view
// (and those of a page just read, until it is placed): the others it keeps by id alone
// (transcript.ts, FarEntry), and asks the host for them (`entries`) when their chunk comes
// back into reach. The host sends its state that way too (a reset: the last entries whole).

import { IdMap, IdSet } from '../core/id-map';
import type { ChatState } from '../core/chat-state';
import { fill, parentOf, positionOf, release, takeChanged, type HeldEntry } from '../core/transcript';
import { CHUNK, ChunkWindow, type Chunk } from './chunk-window';
import { errorText, type ViewContext } from './context';
import { h, setHidden } from './dom';
import type { EntryView } from './entry-view';
import { entryView } from './entry-views';

/** Closer than this to the end counts as "at the end". */
const END_SLACK = 24;

/** The page before is asked for when fewer than this many screens are left above the view. */
const SCREENS_LEFT_ABOVE = 1;

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
  /** The views of the entries drawn (those of the chunks drawn), by entry id, with the rev each shows. */
  private readonly views = new IdMap<{ view: EntryView; rev: number }>();
  private readonly chunks: ChunkWindow;
  private queuedKey = '';
  private following = true;
  /** Entries placed in the list because their Agent/Task call is in a page not read yet, by that call's id. */
  private readonly orphans = new IdMap<string[]>();
  /** Drawn chunks whose entries changed places: drawn anew once the change is placed. */
  private readonly moved = new Set<Chunk>();
  /** The page asked for the page before, and has no answer yet. */
  private asking = false;
  /** A frame is to look again whether the view is near the top (the chunks near it were being drawn). */
  private topCheck = 0;
  /** Entries kept by id alone that a chunk in reach needs: asked for together, once a frame. */
  private readonly wanted = new IdSet();
  /** Entries asked for, not answered yet. */
  private readonly fetching = new IdSet();
  /** Entries the host did not give when asked (the chat moved on, or the request failed):
   * their chunk is drawn without them rather than asked for again every frame. */
  private readonly unavailable = new IdSet();

  constructor(private readonly ctx: ViewContext) {
    this.olderRow.hidden = true;
    this.el = h('div', { class: 'transcript' }, this.olderRow, this.empty, this.list, this.queued);
    this.chunks = new ChunkWindow(this.list, this.el, {
      draw: (chunk, until) => this.drawChunk(chunk, until),
      drop: (chunk) => {
        for (const id of chunk.ids) this.views.delete(id);
      },
      ready: (chunk) => this.ready(chunk),
      release: (chunk) => this.letGo(chunk),
      following: () => this.following,
    });
    this.el.addEventListener(
      'scroll',
      () => {
        this.following = this.el.scrollHeight - this.el.scrollTop - this.el.clientHeight < END_SLACK;
        ctx.view.update({ scrollTop: this.following ? null : this.el.scrollTop });
        this.chunks.schedule();
        this.loadOlderNearTop();
      },
      { passive: true },
    );
    // Entries drawn take their height after the frame they were added in (a long answer a
    // slice a frame): the end stays in view while the user follows it.
    const resized = new ResizeObserver(() => {
      if (!this.following) return;
      const top = this.el.scrollTop;
      this.scrollToEnd();
      // Not moved (a page shorter than the view): no scroll event asks whether the view is
      // near the top, and the page before may be wanted.
      if (this.el.scrollTop === top) this.loadOlderNearTop();
    });
    resized.observe(this.list);
    resized.observe(this.queued);
  }

  /** Drops every view and places the state anew; draws the chunks at the saved scroll position. */
  rebuild(state: ChatState): void {
    this.views.clear();
    this.orphans.clear();
    this.moved.clear();
    this.chunks.clear();
    this.wanted.clear();
    this.unavailable.clear();
    this.queuedKey = '';
    // Every entry is placed: from here on the state lists the entries that change (a state
    // from the host has no list: the page's own copy starts it).
    state.changed = [];
    state.revs = heldRevs(state);
    for (const entry of state.entries) this.place(entry, undefined);
    this.moved.clear();
    this.chunks.sizeBoxes();
    const saved = this.ctx.view.current.scrollTop;
    this.following = saved === null;
    if (saved === null) this.scrollToEnd();
    else this.el.scrollTop = saved;
    this.update(state);
  }

  /** Draws what changed since the last update (the entries the state lists as changed). */
  update(state: ChatState): void {
    this.draw(state, takeChanged(state));
    const drewChunks = this.chunks.settle();
    const queuedKey = state.queued.map((q) => `${q.id}@${state.revs.get(q.id) ?? 0}`).join(',');
    if (queuedKey !== this.queuedKey) {
      this.queuedKey = queuedKey;
      this.queued.replaceChildren(...state.queued.map((q) => entryView(q, this.ctx).el));
    }
    setHidden(this.empty, state.entries.length > 0 || state.queued.length > 0);
    this.showOlder(state);
    if (this.following) {
      // Chunks drawn whole (a chat opening, pages coming into view): the view goes to the end
      // once the frame has laid them out (the ResizeObserver). Scrolling there now laid them
      // out inside this task: a chat opening drew ~20 ms, then laid out ~25 ms, in one task.
      // A streaming answer's update scrolls at once: what it adds is small, and the frame then
      // finds the layout done.
      if (drewChunks) return;
      this.scrollToEnd();
    }
    this.loadOlderNearTop();
  }

  /** Updates the views of `entries` (in the conversation's order) whose rev moved, and places
   * the new ones (drawn at once in a chunk drawn; one not drawn draws them from the state). */
  private draw(state: ChatState, entries: readonly HeldEntry[]): void {
    const fresh = entries.filter((e) => !this.chunks.chunkOf(e.id));
    const nextOf = this.nextPlaced(state, fresh);
    for (const entry of entries) {
      if (entry.kind === 'far') continue; // a chunk not drawn: asked for when it is
      const rev = state.revs.get(entry.id) ?? 0;
      const known = this.views.get(entry.id);
      if (known) {
        if (known.rev !== rev) {
          known.view.update(entry);
          known.rev = rev;
        }
        continue;
      }
      if (!nextOf.has(entry.id)) {
        // Placed in a chunk not drawn, and now held whole (it changed): let go of unless drawn.
        const chunk = this.chunks.chunkOf(entry.id);
        if (chunk) this.chunks.loosen(chunk);
        continue;
      }
      const next = nextOf.get(entry.id);
      const chunk = this.place(entry, next);
      // A chunk drawn in part draws it in its turn (after those before it, in order).
      if (!chunk.drawn || chunk.partly || this.moved.has(chunk)) continue;
      if (next) {
        // Before an entry placed (a notice before the running turn): rare, the chunk is drawn anew.
        this.moved.add(chunk);
        continue;
      }
      const view = entryView(entry, this.ctx);
      this.views.set(entry.id, { view, rev });
      const parentId = parentOf(entry);
      (this.nestedIn(parentId, chunk) ?? chunk.el).append(view.el);
    }
    this.redrawMoved();
  }

  /**
   * Places pages of older entries the chat placed (`ids`, the olderPage events' entries)
   * above the entries placed, the entry at the top of the view staying where it is on
   * screen; the chunks near the view are drawn with the next update. An entry placed already
   * moves to its place in the page; the entries of an Agent/Task call placed before their
   * call's page was read move into its chunk.
   */
  placeOlder(state: ChatState, ids: readonly string[]): void {
    const position = (id: string) => positionOf(state, id) ?? -1;
    const page = ids.filter((id) => state.at.has(id)).sort((a, b) => position(a) - position(b));
    if (!page.length) return;
    this.showOlder(state);
    const inPage = new IdSet(page);
    const entries = page.map((id) => state.entries[position(id)]!);
    const nested = (entry: HeldEntry) => {
      const parentId = parentOf(entry);
      return parentId !== undefined && (inPage.has(parentId) || this.chunks.chunkOf(parentId) !== undefined);
    };
    const tops = entries.filter((e) => !nested(e)).length;
    const next = this.after(state, page.at(-1)!, inPage);
    const nextChunk = next && this.chunks.chunkOf(next.id);
    this.chunks.keepingView(() => {
      // Entries placed before the page's next entry in its chunk (entries of the page placed
      // already): the page goes in that chunk, before it.
      const within = nextChunk && [...nextChunk.ids].some((id) => !inPage.has(id) && position(id) < position(next.id));
      const made = within ? [] : this.chunks.insert(tops, nextChunk);
      let top = 0;
      for (const entry of entries) {
        const parentChunk = nested(entry) ? this.chunks.chunkOf(parentOf(entry)!) : undefined;
        const chunk = parentChunk ?? (within ? nextChunk : made[Math.floor(top++ / CHUNK)]!);
        this.move(entry, chunk);
        if (chunk.drawn) this.moved.add(chunk);
      }
      this.redrawMoved();
    });
  }

  /** The row above the entries as the state says: older entries left, a page of them on its way. */
  private showOlder(state: ChatState): void {
    const { more, loading } = state.older;
    setHidden(this.olderRow, !more && !loading);
    const text = loading ? 'Loading earlier messages…' : 'Earlier messages: scroll up to load them';
    if (this.olderRow.textContent !== text) this.olderRow.textContent = text;
    this.olderRow.classList.toggle('loading', loading);
  }

  /**
   * Puts a new entry in its chunk: its Agent/Task call's (noted as waiting for it when the
   * call is not placed yet), else that of the entry placed after it (`next`), else the end.
   * The entries that waited for it (it is their call) move into its chunk.
   */
  private place(entry: HeldEntry, next: HeldEntry | undefined): Chunk {
    const parentId = parentOf(entry);
    const parentChunk = parentId === undefined ? undefined : this.chunks.chunkOf(parentId);
    if (parentId !== undefined && !parentChunk) {
      const waiting = this.orphans.get(parentId) ?? [];
      waiting.push(entry.id);
      this.orphans.set(parentId, waiting);
    }
    const chunk = parentChunk ?? (next && this.chunks.chunkOf(next.id)) ?? this.chunks.atEnd();
    this.move(entry, chunk);
    return chunk;
  }

  /** Puts entry `entry` in `chunk` (out of the one it was in: its view goes), and the entries
   * that waited for it there; notes the drawn chunks whose entries moved. */
  private move(entry: HeldEntry, chunk: Chunk): void {
    const was = this.chunks.put(entry.id, chunk);
    if (was) {
      this.views.delete(entry.id);
      if (was.drawn) this.moved.add(was);
      if (chunk.drawn) this.moved.add(chunk);
    }
    const waiting = this.orphans.get(entry.id);
    if (!waiting) return;
    this.orphans.delete(entry.id);
    for (const id of waiting) {
      const from = this.chunks.put(id, chunk);
      this.views.delete(id);
      if (from?.drawn) this.moved.add(from);
      if (chunk.drawn) this.moved.add(chunk);
    }
  }

  /** Draws anew the chunks drawn whose entries moved. */
  private redrawMoved(): void {
    for (const chunk of this.moved) this.chunks.redraw(chunk);
    this.moved.clear();
  }

  /**
   * Draws the views of a chunk's entries not drawn yet, in the conversation's order, each into
   * its call's view or the chunk, until `until` (at least one); whether all are drawn.
   */
  private drawChunk(chunk: Chunk, until: number): boolean {
    const state = this.ctx.state();
    const placed = [...chunk.ids]
      .filter((id) => !this.views.has(id))
      .map((id) => ({ id, at: positionOf(state, id) ?? -1 }))
      .filter((p) => p.at >= 0)
      .sort((a, b) => a.at - b.at);
    let drew = false;
    for (const { id, at } of placed) {
      const entry = state.entries[at]!;
      if (entry.kind === 'far') continue; // the host no longer has it (unavailable)
      if (drew && performance.now() >= until) return false;
      const view = entryView(entry, this.ctx);
      this.views.set(id, { view, rev: state.revs.get(id) ?? 0 });
      (this.nestedIn(parentOf(entry), chunk) ?? chunk.el).append(view.el);
      drew = true;
    }
    return true;
  }

  /**
   * Keeps the entries of a chunk out of reach by id alone, without their revs: a rev tells a
   * view whether to redraw, and no view shows them (drawn again, a view starts from rev 0 and
   * any change after that still moves it). A rev per entry read is a 100,000-key dictionary
   * (~3 MB) at 100,000 entries, held for nothing and marked by every major GC (issue 43).
   */
  private letGo(chunk: Chunk): void {
    const state = this.ctx.state();
    // A chunk whose entries were kept by id alone already (placed so at a reset) has no revs
    // left to drop: rebuild kept none for them.
    if (!release(state, chunk.ids)) return;
    for (const id of chunk.ids) state.revs.delete(id);
  }

  /**
   * Whether the entries of `chunk` are held whole, to be drawn; those kept by id alone are
   * asked for (with those of the other chunks in reach, in one request) and the chunk is
   * drawn in the frame after they came.
   */
  private ready(chunk: Chunk): boolean {
    const state = this.ctx.state();
    let ready = true;
    for (const id of chunk.ids) {
      if (state.entries[positionOf(state, id) ?? -1]?.kind !== 'far' || this.unavailable.has(id)) continue;
      ready = false;
      if (this.fetching.has(id)) continue;
      if (!this.wanted.size) queueMicrotask(() => this.fetchWanted());
      this.wanted.add(id);
    }
    return ready;
  }

  /** Asks the host for the entries wanted; places them in the state as they come. */
  private fetchWanted(): void {
    const ids = [...this.wanted];
    this.wanted.clear();
    if (!ids.length) return;
    for (const id of ids) this.fetching.add(id);
    this.ctx
      .request('entries', { ids })
      .then(({ entries }) => {
        const state = this.ctx.state();
        fill(state, entries);
        const got = new IdSet(entries.map((e) => e.id));
        for (const id of ids) {
          if (!got.has(id) && state.entries[positionOf(state, id) ?? -1]?.kind === 'far') this.unavailable.add(id);
          const chunk = this.chunks.chunkOf(id);
          if (chunk) this.chunks.loosen(chunk);
        }
      })
      .catch((e: unknown) => {
        for (const id of ids) this.unavailable.add(id);
        this.ctx.toast(`Messages: ${errorText(e)}`, 'error');
      })
      .finally(() => {
        for (const id of ids) this.fetching.delete(id);
        this.chunks.schedule();
      });
  }

  /** The view of Agent/Task call `parentId` that its entries go into, when the call is drawn in `chunk`. */
  private nestedIn(parentId: string | undefined, chunk: Chunk): HTMLElement | undefined {
    if (parentId === undefined || this.chunks.chunkOf(parentId) !== chunk) return undefined;
    return this.views.get(parentId)?.view.children ?? undefined;
  }

  /**
   * For each of the entries not placed (in the conversation's order), the first entry after
   * it that is placed (undefined: none, it goes at the end). Walked from the last: each looks
   * one entry ahead, so a batch costs its own length.
   */
  private nextPlaced(state: ChatState, fresh: readonly HeldEntry[]): IdMap<HeldEntry | undefined> {
    const next = new IdMap<HeldEntry | undefined>();
    const ids = new IdSet(fresh.map((e) => e.id));
    for (let k = fresh.length - 1; k >= 0; k--) {
      const id = fresh[k]!.id;
      const after = state.entries[(positionOf(state, id) ?? state.entries.length) + 1];
      next.set(id, after && ids.has(after.id) ? next.get(after.id) : after);
    }
    return next;
  }

  /** The first entry after `id` that is neither in the page nor a sub-agent's of an entry of it. */
  private after(state: ChatState, id: string, inPage: IdSet): HeldEntry | undefined {
    for (let i = (positionOf(state, id) ?? state.entries.length) + 1; i < state.entries.length; i++) {
      const entry = state.entries[i]!;
      const parentId = parentOf(entry);
      if (!inPage.has(entry.id) && !(parentId !== undefined && inPage.has(parentId))) return entry;
    }
    return undefined;
  }

  /** Asks the host for the page before the entries drawn when the view is near their top:
   * not while a page is on its way, and not once the first entry is drawn. */
  private loadOlderNearTop(): void {
    const { more, loading } = this.ctx.state().older;
    if (!more || loading || this.asking) return;
    if (this.following && this.chunks.busy) {
      // A chat opening at its end draws the chunks above it a few entries a frame: it is near
      // its top until they are. (A user scrolling up is not kept waiting for the page before.)
      this.topCheck ||= requestAnimationFrame(() => {
        this.topCheck = 0;
        this.loadOlderNearTop();
      });
      return;
    }
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

  scrollToEnd(): void {
    this.el.scrollTop = this.el.scrollHeight;
  }
}

/** The revs of the entries a state holds whole and of its queued prompts: those kept by id
 * alone need none (TranscriptView.letGo), though a state from the host has one for each. */
function heldRevs(state: ChatState): IdMap<number> {
  const revs = new IdMap<number>();
  for (const list of [state.entries, state.queued]) {
    for (const entry of list) {
      const rev = state.revs.get(entry.id);
      if (entry.kind !== 'far' && rev !== undefined) revs.set(entry.id, rev);
    }
  }
  return revs;
}
