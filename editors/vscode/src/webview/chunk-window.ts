// The conversation's list as chunks of entries of which only those near the view are drawn:
// a bounded DOM however long the chat. A chunk out of reach keeps its entries' ids and is an
// empty box of the height it had when last drawn (an estimate, before it ever was); the
// entries' views are made again, from the chat state, when it comes near the view. The
// chunks are grouped in sections; a section far from the view with none of its chunks drawn
// is one box of their heights (its chunks' boxes out of the page), so what a frame costs the
// page and the browser grows with the chunks drawn (a few) and the sections (a hundred at
// 100,000 entries), not with the entries: the sections and chunks in reach are found by
// halving. Chunks are drawn a few per frame (the nearest first), a chunk whose entries take
// longer than a frame's budget over several frames (its first entries first: `partly`), and
// whatever is drawn or put above the view, the entry in view stays where it is on screen. The
// last chunk is always drawn whole: what streams in, and the end a chat opens at, show at once.
//
// A chunk not drawn holds no entry whole either: out of reach, its entries are let go
// (ChunkPainter.release: the page keeps their ids, the chunk its height) and a chunk whose
// entries are not all held is drawn once the painter has them again (`ready`, asked of the
// host). So the page's heap, and the V8 GC pauses that grow with it, hold a few chunks'
// entries, not the chat's (issue 43: 52 ms major GC pauses at 100,000 entries held).

import { IdMap, IdSet } from '../core/id-map';

/** Entries per chunk (a sub-agent's entries go in their Agent/Task call's chunk beyond it). */
export const CHUNK = 25;

/** Chunks per section. */
const SECTION = 40;

/** Chunks within this many screens of the view are drawn; */
const DRAW_SCREENS = 1;
/** drawn ones farther than this many are dropped (between the two they stay as they are). */
const KEEP_SCREENS = 3;

/** A frame draws entries for this long at most (at least one). What it draws costs about as
 * much again in style, layout and paint, and on two busy cores the frame's task waits for a core
 * about as long as it runs: chunks drawn whole (25 entries each, 12 ms) made tasks of 25-45 ms
 * of CPU, 75-120 ms long, as a long chat was scrolled (issue 43). */
const BUDGET_MS = 5;

/** The budget in force: the tests set `sidecarDrawBudgetMs` (0: an entry per frame) to see a
 * chunk drawn in parts whatever the machine's speed. */
function budgetMs(): number {
  const set = (globalThis as { sidecarDrawBudgetMs?: unknown }).sidecarDrawBudgetMs;
  return typeof set === 'number' ? set : BUDGET_MS;
}

/** What a chunk's entry takes, in px, until chunks were measured. */
const ENTRY_PX = 80;

export interface Chunk {
  readonly el: HTMLElement;
  /** The entries placed in it: its own and those of the sub-agents nested in them. */
  readonly ids: IdSet;
  /** Its entries' views are in it; else it is an empty box of `box` px. */
  drawn: boolean;
  /** Drawn, but only its first entries so far: the others are drawn in the next frames. */
  partly: boolean;
  /** Its height when last drawn, while its entries stayed the same; undefined: estimated. */
  height: number | undefined;
  /** The height of its box while it is not drawn. */
  box: number;
  section: Section;
}

/** Consecutive chunks; folded: one box of their heights, their elements out of it. */
interface Section {
  readonly el: HTMLElement;
  readonly chunks: Chunk[];
  folded: boolean;
}

/** Makes and forgets the views of a chunk's entries (the transcript's), and holds the entries. */
export interface ChunkPainter {
  /** Draws the views of the chunk's entries not drawn yet into its element, in order, until
   * `until` (performance.now(); at least one); only once `ready`. Whether all are drawn. */
  draw(chunk: Chunk, until: number): boolean;
  /** Forgets the views of the chunk's entries: their elements are dropped. */
  drop(chunk: Chunk): void;
  /** Whether the chunk's entries are held whole, to be drawn; if not, they are asked for and
   * the window is told (`loosen`) when they came. */
  ready(chunk: Chunk): boolean;
  /** Lets go of the chunk's entries (not drawn, out of reach): only their ids are kept. */
  release(chunk: Chunk): void;
  /** The view follows the end (its owner scrolls it there after each change): nothing in
   * view is kept in place. */
  following(): boolean;
}

/** An element on screen and where its top was. */
interface Anchor {
  el: Element;
  top: number;
}

/** Something of the list in reach, and its box on screen. */
interface Boxed<T> {
  item: T;
  box: DOMRect;
}

export class ChunkWindow {
  /** Every chunk, in the list's order. */
  private chunks: Chunk[] = [];
  private sections: Section[] = [];
  private readonly placed = new IdMap<Chunk>();
  private readonly byElement = new WeakMap<Element, Chunk>();
  private readonly drawn = new Set<Chunk>();
  private readonly unfolded = new Set<Section>();
  /** Chunks not drawn whose entries changed: their box's height is set anew. */
  private readonly unsized = new Set<Chunk>();
  /** Chunks not drawn that may hold entries whole (placed in them, or asked for): let go of
   * in a fit that finds them far from the view (as drawn chunks are dropped). */
  private readonly loose = new Set<Chunk>();
  /** The chunks made for the last page read above (`insert`). */
  private arriving = new Set<Chunk>();
  /** Chunks were added or their entries changed since the last fit. */
  private changed = false;
  /** The entry the last change kept in place, where it was, and the scroll that kept it there. */
  private held: Anchor | undefined;
  private heldAt = NaN;
  private measuredPx = 0;
  private measuredEntries = 0;
  private frame = 0;

  constructor(
    private readonly list: HTMLElement,
    private readonly scroller: HTMLElement,
    private readonly painter: ChunkPainter,
  ) {}

  /** The chunk entry `id` is placed in. */
  chunkOf(id: string): Chunk | undefined {
    return this.placed.get(id);
  }

  /** Forgets every chunk (the list is emptied). */
  clear(): void {
    for (const chunk of this.drawn) this.painter.drop(chunk);
    this.chunks = [];
    this.sections = [];
    this.placed.clear();
    this.drawn.clear();
    this.unfolded.clear();
    this.unsized.clear();
    this.loose.clear();
    this.arriving = new Set();
    this.held = undefined;
    this.list.replaceChildren();
  }

  /** The chunk an entry after all the others goes in: the last one, or a new one when it is full. */
  atEnd(): Chunk {
    const last = this.chunks.at(-1);
    if (last && last.ids.size < CHUNK) return last;
    let section = this.sections.at(-1);
    if (!section || section.chunks.length >= SECTION) {
      section = this.makeSection();
      this.sections.push(section);
      this.list.append(section.el);
    }
    const made = this.make(section);
    this.chunks.push(made);
    section.chunks.push(made);
    this.unfold(section);
    section.el.append(made.el);
    return made;
  }

  /**
   * New chunks (not drawn) for `count` entries, before `next` (at the end when none): in
   * next's section when it has room (or `next` is not its first), else in sections of their own.
   */
  insert(count: number, next: Chunk | undefined): Chunk[] {
    const target = next?.section ?? this.sections.at(-1);
    const made = Array.from({ length: Math.ceil(count / CHUNK) }, () => this.make(target!));
    if (!made.length) return made;
    this.arriving = new Set(made);
    this.chunks.splice(next ? this.chunks.indexOf(next) : this.chunks.length, 0, ...made);
    const within = next && next !== target!.chunks[0];
    if (target && (within || target.chunks.length + made.length <= SECTION)) {
      target.chunks.splice(next ? target.chunks.indexOf(next) : target.chunks.length, 0, ...made);
      if (!target.folded) target.el.insertBefore(fragment(made.map((c) => c.el)), next?.el ?? null);
      return made;
    }
    const sections: Section[] = [];
    for (let i = 0; i < made.length; i += SECTION) {
      const section = this.makeSection();
      section.chunks.push(...made.slice(i, i + SECTION));
      for (const chunk of section.chunks) chunk.section = section;
      section.el.append(...section.chunks.map((c) => c.el));
      sections.push(section);
      this.unfolded.add(section);
    }
    this.sections.splice(next ? this.sections.indexOf(next.section) : this.sections.length, 0, ...sections);
    this.list.insertBefore(fragment(sections.map((s) => s.el)), next?.section.el ?? null);
    return made;
  }

  /**
   * Places entry `id` in `chunk`, out of the one it was in (returned; a chunk left empty goes).
   * A chunk drawn shows its new entries only once the caller draws them, or `redraw`s it.
   */
  put(id: string, chunk: Chunk): Chunk | undefined {
    const was = this.placed.get(id);
    if (was === chunk) return undefined;
    this.placed.set(id, chunk);
    chunk.ids.add(id);
    this.touched(chunk);
    if (!chunk.drawn) this.loose.add(chunk);
    if (!was) return undefined;
    was.ids.delete(id);
    this.touched(was);
    if (!was.ids.size) this.remove(was);
    return was;
  }

  /** Notes that a chunk not drawn holds entries whole (they were asked for, or changed): drawn
   * in the next fit if it is in reach, else they are let go. */
  loosen(chunk: Chunk): void {
    if (chunk.drawn) return;
    this.loose.add(chunk);
    this.changed = true;
  }

  /** Draws a drawn chunk's entries anew (they changed places), the view staying where it is;
   * one whose entries are not all held is a box until they come. */
  redraw(chunk: Chunk): void {
    if (!chunk.drawn || !chunk.el.isConnected) return;
    if (!this.painter.ready(chunk)) {
      this.keepingView(() => this.undraw(chunk, chunk.el.getBoundingClientRect().height, false));
      return;
    }
    this.keepingView(() => {
      this.painter.drop(chunk);
      chunk.el.replaceChildren();
      chunk.partly = !this.painter.draw(chunk, Infinity);
    });
  }

  /** Chunks near the view are left to draw (or far ones to drop): a fit is due in the next frame. */
  get busy(): boolean {
    return this.frame !== 0;
  }

  /** Fits the chunks drawn to the view in the next frame (the user scrolled). */
  schedule(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => this.fit());
    // Chunks near the view are still to be drawn (or dropped): assistive technology waits
    // for the list's new entries, and the tests for the page to have drawn what is near the view.
    this.list.setAttribute('aria-busy', 'true');
  }

  /** Fits the chunks drawn to the view now if chunks were added or their entries changed;
   * whether it drew any. */
  settle(): boolean {
    return this.changed && this.fit() > 0;
  }

  /**
   * Draws the chunks near the view that are not, or are drawn in part (the nearest first, for
   * BUDGET_MS at most: the rest in the next frame), and drops those drawn far from it (in what
   * is left of it), except the last (what streams in shows at once) and one holding the focus
   * or the selection; folds the sections far from it that have none drawn; lets go of the
   * entries of the chunks not drawn far from it. The entry in view stays where it is on
   * screen. Returns how many chunks it drew in.
   */
  fit(): number {
    cancelAnimationFrame(this.frame);
    this.frame = 0;
    this.list.removeAttribute('aria-busy');
    this.changed = false;
    const last = this.chunks.at(-1);
    if (!last) return 0;
    let drew = 0;
    this.keepingView(() => {
      this.sizeBoxes();
      const view = this.scroller.getBoundingClientRect();
      const screen = Math.max(view.height, 1);
      const far = (box: DOMRect) =>
        box.bottom < view.top - KEEP_SCREENS * screen || box.top > view.bottom + KEEP_SCREENS * screen;
      const pinned = this.pinned();
      // Every box read before anything is written: one layout.
      const dropping = [...this.drawn]
        .filter((c) => c !== last && !pinned.has(c))
        .map((item) => ({ item, box: item.el.getBoundingClientRect() }))
        .filter(({ box }) => far(box));
      const folding = [...this.unfolded]
        .filter((s) => s !== last.section)
        .map((item) => ({ item, box: item.el.getBoundingClientRect() }))
        .filter(({ box }) => far(box));
      // Chunks not drawn that hold entries whole, far from the view (or out of the page, their
      // section folded): let go of. Nearer, they are kept, as drawn chunks are: a page read
      // above is not let go of and asked for again as the user goes on up.
      // The chunks of the last page read above are kept while they are above the view: the
      // user on the way up draws them next.
      const releasing = [...this.loose].filter((c) => {
        if (c.drawn) return false;
        if (!c.el.isConnected) return !this.arriving.has(c);
        const box = c.el.getBoundingClientRect();
        return far(box) && !(this.arriving.has(c) && box.bottom <= view.top);
      });
      const reach = this.sectionsBetween(view.top - DRAW_SCREENS * screen, view.bottom + DRAW_SCREENS * screen);
      // The chunks near the view are found before any is dropped: with no section to unfold,
      // the layout read above serves (dropping first made the page lay out again).
      for (const { item } of reach) this.unfold(item);
      const near = this.chunksBetween(reach, view.top - DRAW_SCREENS * screen, view.bottom + DRAW_SCREENS * screen);
      if (!near.some((n) => n.item === last)) near.push({ item: last, box: last.el.getBoundingClientRect() });
      const middle = (view.top + view.bottom) / 2;
      const distance = (box: DOMRect) => Math.max(0, box.top - middle, middle - box.bottom);
      // Those drawn in part go on being drawn, in reach or not (unless far: dropped).
      const dropped = new Set(dropping.map((d) => d.item));
      const partly = [...this.drawn]
        .filter((c) => c.partly && !dropped.has(c) && !near.some((n) => n.item === c))
        .map((item) => ({ item, box: item.el.getBoundingClientRect() }));
      const drawing = [...near.filter((n) => !n.item.drawn || n.item.partly), ...partly].sort(
        (a, b) => distance(a.box) - distance(b.box),
      );
      const until = performance.now() + budgetMs();
      for (const { item: chunk } of drawing) {
        if (chunk !== drawing[0]!.item && performance.now() >= until) {
          this.schedule();
          break;
        }
        if (!chunk.drawn) {
          // Its entries are on their way from the host: drawn in the fit after they come.
          if (!this.painter.ready(chunk)) continue;
          this.unfold(chunk.section);
          chunk.el.style.height = '';
          chunk.el.classList.remove('undrawn');
          chunk.drawn = true;
          this.drawn.add(chunk);
          this.loose.delete(chunk);
        }
        drew++;
        chunk.partly = !this.painter.draw(chunk, chunk === last ? Infinity : until);
        if (!chunk.partly) continue;
        this.schedule();
        break;
      }
      // Far chunks are dropped in what is left of the budget, one at least: taking apart a
      // chunk's elements costs about what making them did, and these are screens away.
      for (const [k, { item, box }] of dropping.entries()) {
        if (k > 0 && performance.now() >= until) {
          this.schedule();
          break;
        }
        this.undraw(item, box.height);
      }
      for (const { item } of folding) if (!item.chunks.some((c) => c.drawn)) this.fold(item);
      for (const chunk of releasing) {
        if (chunk.drawn) continue;
        this.loose.delete(chunk);
        this.painter.release(chunk);
      }
    });
    return drew;
  }

  /**
   * Runs `change` (which may change what is drawn above the view) and scrolls so that the
   * entry in view stays where it was on screen.
   */
  keepingView(change: () => void): void {
    // Following the end, measuring an entry in view before and after the change forced two
    // layouts of what was just drawn (a frame of a streaming answer), for nothing.
    if (this.painter.following()) {
      this.held = undefined;
      change();
      this.sizeBoxes();
      return;
    }
    // The view did not move since the last change kept it: the same entry is kept where it
    // was then. Scrolls go by whole pixels: measured anew each time, the half pixels of a
    // chunk drawn over many frames added up (6 px over a chunk drawn an entry a frame).
    const held = this.held?.el.isConnected && this.scroller.scrollTop === this.heldAt ? this.held : undefined;
    const anchor = held ?? this.anchor();
    change();
    this.sizeBoxes();
    this.held = undefined;
    if (!anchor?.el.isConnected) return;
    const moved = anchor.el.getBoundingClientRect().top - anchor.top;
    if (moved) this.scroller.scrollTop += moved;
    this.held = anchor;
    this.heldAt = this.scroller.scrollTop;
  }

  /** Sets the boxes of the chunks not drawn whose entries changed to their estimated height
   * (and the folded sections holding them to their chunks' heights). */
  sizeBoxes(): void {
    const sections = new Set<Section>();
    const perEntry = this.measuredEntries ? this.measuredPx / this.measuredEntries : ENTRY_PX;
    for (const chunk of this.unsized) {
      if (chunk.drawn) continue;
      chunk.box = chunk.height ?? Math.round(chunk.ids.size * perEntry);
      chunk.el.style.height = `${chunk.box}px`;
      if (chunk.section.folded) sections.add(chunk.section);
    }
    this.unsized.clear();
    for (const section of sections) this.sizeFolded(section);
  }

  private make(section: Section): Chunk {
    const el = document.createElement('div');
    el.className = 'chunk undrawn';
    const chunk: Chunk = { el, ids: new IdSet(), drawn: false, partly: false, height: undefined, box: 0, section };
    this.byElement.set(el, chunk);
    this.touched(chunk);
    return chunk;
  }

  private makeSection(): Section {
    const el = document.createElement('div');
    el.className = 'section';
    return { el, chunks: [], folded: false };
  }

  private touched(chunk: Chunk): void {
    this.changed = true;
    if (chunk.drawn) return;
    chunk.height = undefined;
    this.unsized.add(chunk);
  }

  private remove(chunk: Chunk): void {
    if (chunk.drawn) this.painter.drop(chunk);
    this.drawn.delete(chunk);
    this.unsized.delete(chunk);
    this.loose.delete(chunk);
    this.chunks.splice(this.chunks.indexOf(chunk), 1);
    const section = chunk.section;
    section.chunks.splice(section.chunks.indexOf(chunk), 1);
    chunk.el.remove();
    if (section.chunks.length) {
      if (section.folded) this.sizeFolded(section);
      return;
    }
    this.sections.splice(this.sections.indexOf(section), 1);
    this.unfolded.delete(section);
    section.el.remove();
  }

  /** Makes a drawn chunk a box of `height` px (estimated if it was drawn in part); its entries
   * are let go, or (`release` false: they are asked for to draw it anew) kept until the next fit. */
  private undraw(chunk: Chunk, height: number, release = true): void {
    this.painter.drop(chunk);
    if (release) this.painter.release(chunk);
    else this.loose.add(chunk);
    chunk.el.replaceChildren();
    chunk.el.classList.add('undrawn');
    chunk.drawn = false;
    this.drawn.delete(chunk);
    if (chunk.partly) {
      chunk.partly = false;
      chunk.height = undefined;
      this.unsized.add(chunk);
      return;
    }
    chunk.height = height;
    chunk.box = height;
    chunk.el.style.height = `${height}px`;
    this.measuredPx += height;
    this.measuredEntries += chunk.ids.size;
  }

  /** Makes a section of chunks not drawn one box of their heights. */
  private fold(section: Section): void {
    section.folded = true;
    this.unfolded.delete(section);
    section.el.replaceChildren();
    section.el.classList.add('folded');
    this.sizeFolded(section);
  }

  private unfold(section: Section): void {
    this.unfolded.add(section);
    if (!section.folded) return;
    section.folded = false;
    section.el.classList.remove('folded');
    section.el.style.height = '';
    section.el.append(...section.chunks.map((c) => c.el));
  }

  private sizeFolded(section: Section): void {
    section.el.style.height = `${section.chunks.reduce((sum, c) => sum + c.box, 0)}px`;
  }

  /** The sections that reach into [top, bottom] (screen coordinates), with their boxes. */
  private sectionsBetween(top: number, bottom: number): Boxed<Section>[] {
    const found: Boxed<Section>[] = [];
    for (let i = firstEndingBelow(this.sections, top); i < this.sections.length; i++) {
      const item = this.sections[i]!;
      const box = item.el.getBoundingClientRect();
      if (box.top > bottom) break;
      found.push({ item, box });
    }
    return found;
  }

  /** The chunks of `sections` (unfolded) that reach into [top, bottom], with their boxes. */
  private chunksBetween(sections: Boxed<Section>[], top: number, bottom: number): Boxed<Chunk>[] {
    const found: Boxed<Chunk>[] = [];
    for (const { item: section } of sections) {
      for (let i = firstEndingBelow(section.chunks, top); i < section.chunks.length; i++) {
        const item = section.chunks[i]!;
        const box = item.el.getBoundingClientRect();
        if (box.top > bottom) break;
        found.push({ item, box });
      }
    }
    return found;
  }

  /** The chunks holding the focus or an end of the selection: never dropped under the user. */
  private pinned(): Set<Chunk> {
    const selection = document.getSelection();
    const chunks = new Set<Chunk>();
    for (const node of [document.activeElement, selection?.anchorNode, selection?.focusNode]) {
      const el = node instanceof Element ? node : node?.parentElement;
      const chunk = el?.closest('.chunk');
      const found = chunk && this.byElement.get(chunk);
      if (found) chunks.add(found);
    }
    return chunks;
  }

  /**
   * The element to keep in place: the first entry in view of a drawn chunk (one drawn anew
   * may change its height: an entry below it stays put), else the first chunk or folded
   * section in view.
   */
  private anchor(): Anchor | undefined {
    const view = this.scroller.getBoundingClientRect();
    let fallback: Element | undefined;
    for (const { item: section } of this.sectionsBetween(view.top, view.bottom)) {
      if (section.folded) {
        fallback ??= section.el;
        continue;
      }
      for (const { item: chunk } of this.chunksBetween([{ item: section, box: view }], view.top, view.bottom)) {
        fallback ??= chunk.el;
        if (!chunk.drawn) continue;
        const entry = firstEndingBelow(
          [...chunk.el.children].map((el) => ({ el })),
          view.top,
        );
        const el = chunk.el.children[entry];
        if (el) return { el, top: el.getBoundingClientRect().top };
      }
    }
    return fallback && { el: fallback, top: fallback.getBoundingClientRect().top };
  }
}

/** The index of the first of `items` (top to bottom) whose bottom is below `y` (found by halving). */
function firstEndingBelow(items: readonly { el: Element }[], y: number): number {
  let low = 0;
  let high = items.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (items[mid]!.el.getBoundingClientRect().bottom <= y) low = mid + 1;
    else high = mid;
  }
  return low;
}

function fragment(els: HTMLElement[]): DocumentFragment {
  const made = document.createDocumentFragment();
  made.append(...els);
  return made;
}
