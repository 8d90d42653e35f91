// The conversation's list as chunks of entries of which only those near the view are drawn:
// a bounded DOM however long the chat. A chunk out of reach keeps its entries' ids and an
// empty box of the height it had when last drawn (an estimate, before it ever was); the
// entries' views are made again, from the chat state, when it comes near the view. What a
// scroll costs the page grows with the chunks drawn (a few), not with the chat: the chunks
// in reach are found by halving, and the drawn ones are few (the browser still lays out the
// empty boxes: about 3 ms a frame at 4,000 of them, 100,000 entries). Chunks are drawn a few
// per frame (the nearest first) and whatever is drawn or put above the view, the entry in
// view stays where it is on screen.

/** Entries per chunk (a sub-agent's entries go in their Agent/Task call's chunk beyond it). */
export const CHUNK = 25;

/** Chunks within this many screens of the view are drawn; */
const DRAW_SCREENS = 1;
/** drawn ones farther than this many are dropped (between the two they stay as they are). */
const KEEP_SCREENS = 3;

/** A frame draws chunks for this long at most (at least one). */
const BUDGET_MS = 12;

/** What a chunk's entry takes, in px, until chunks were measured. */
const ENTRY_PX = 80;

export interface Chunk {
  readonly el: HTMLElement;
  /** The entries placed in it: its own and those of the sub-agents nested in them. */
  readonly ids: Set<string>;
  /** Its entries' views are in it; else it is an empty box of `height`. */
  drawn: boolean;
  /** Its height when last drawn, while its entries stayed the same; undefined: estimated. */
  height: number | undefined;
}

/** Makes and forgets the views of a chunk's entries (the transcript's). */
export interface ChunkPainter {
  /** Draws the views of the chunk's entries into its element (empty). */
  draw(chunk: Chunk): void;
  /** Forgets the views of the chunk's entries: their elements are dropped. */
  drop(chunk: Chunk): void;
}

/** An element on screen and where its top was. */
interface Anchor {
  el: Element;
  top: number;
}

export class ChunkWindow {
  /** In the list's order. */
  private chunks: Chunk[] = [];
  private readonly placed = new Map<string, Chunk>();
  private readonly byElement = new WeakMap<Element, Chunk>();
  private readonly drawn = new Set<Chunk>();
  /** Chunks not drawn whose entries changed: their box's height is set anew by the next fit. */
  private readonly unsized = new Set<Chunk>();
  /** Chunks were added or their entries changed since the last fit. */
  private changed = false;
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
    this.placed.clear();
    this.drawn.clear();
    this.unsized.clear();
    this.list.replaceChildren();
  }

  /** The chunk an entry after all the others goes in: the last one, or a new one when it is full. */
  atEnd(): Chunk {
    const last = this.chunks.at(-1);
    if (last && last.ids.size < CHUNK) return last;
    const made = this.make();
    this.chunks.push(made);
    this.list.append(made.el);
    return made;
  }

  /** New chunks (not drawn) for `count` entries, before `next` (at the end when none). */
  insert(count: number, next: Chunk | undefined): Chunk[] {
    const made = Array.from({ length: Math.ceil(count / CHUNK) }, () => this.make());
    this.chunks.splice(next ? this.chunks.indexOf(next) : this.chunks.length, 0, ...made);
    this.list.insertBefore(fragment(made.map((c) => c.el)), next?.el ?? null);
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
    if (!was) return undefined;
    was.ids.delete(id);
    this.touched(was);
    if (!was.ids.size) this.remove(was);
    return was;
  }

  /** Draws a drawn chunk's entries anew (they changed places), the view staying where it is. */
  redraw(chunk: Chunk): void {
    if (!chunk.drawn || !chunk.el.isConnected) return;
    this.keepingView(() => {
      this.painter.drop(chunk);
      chunk.el.replaceChildren();
      this.painter.draw(chunk);
    });
  }

  /** Fits the chunks drawn to the view in the next frame (the user scrolled). */
  schedule(): void {
    this.frame ||= requestAnimationFrame(() => this.fit());
  }

  /** Fits the chunks drawn to the view now if chunks were added or their entries changed. */
  settle(): void {
    if (this.changed) this.fit();
  }

  /**
   * Draws the chunks near the view that are not (the nearest first, for BUDGET_MS at most:
   * the rest in the next frame) and drops those drawn far from it, except the last (what
   * streams in shows at once) and one holding the focus or the selection. The entry in view
   * stays where it is on screen.
   */
  fit(): void {
    cancelAnimationFrame(this.frame);
    this.frame = 0;
    this.changed = false;
    const last = this.chunks.at(-1);
    if (!last) return;
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
        .map((chunk) => ({ chunk, box: chunk.el.getBoundingClientRect() }))
        .filter(({ box }) => far(box));
      const near = this.between(view.top - DRAW_SCREENS * screen, view.bottom + DRAW_SCREENS * screen);
      if (!near.some((n) => n.chunk === last)) near.push({ chunk: last, box: last.el.getBoundingClientRect() });
      const middle = (view.top + view.bottom) / 2;
      const distance = (box: DOMRect) => Math.max(0, box.top - middle, middle - box.bottom);
      const drawing = near.filter((n) => !n.chunk.drawn).sort((a, b) => distance(a.box) - distance(b.box));
      for (const { chunk, box } of dropping) this.undraw(chunk, box.height);
      const started = performance.now();
      for (const { chunk } of drawing) {
        if (chunk !== drawing[0]!.chunk && performance.now() - started > BUDGET_MS) {
          this.schedule();
          break;
        }
        chunk.el.style.height = '';
        chunk.el.classList.remove('undrawn');
        chunk.drawn = true;
        this.drawn.add(chunk);
        this.painter.draw(chunk);
      }
    });
  }

  /**
   * Runs `change` (which may change what is drawn above the view) and scrolls so that the
   * entry in view stays where it was on screen.
   */
  keepingView(change: () => void): void {
    const anchor = this.anchor();
    change();
    this.sizeBoxes();
    if (!anchor?.el.isConnected) return;
    const moved = anchor.el.getBoundingClientRect().top - anchor.top;
    if (moved) this.scroller.scrollTop += moved;
  }

  private make(): Chunk {
    const chunk: Chunk = { el: document.createElement('div'), ids: new Set(), drawn: false, height: undefined };
    chunk.el.className = 'chunk undrawn';
    this.byElement.set(chunk.el, chunk);
    this.touched(chunk);
    return chunk;
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
    this.chunks.splice(this.chunks.indexOf(chunk), 1);
    chunk.el.remove();
  }

  /** Sets the chunks not drawn whose entries changed to their estimated height. */
  sizeBoxes(): void {
    for (const chunk of this.unsized) this.size(chunk);
    this.unsized.clear();
  }

  /** Sets a chunk not drawn to its height: as last drawn, else its entries at the average measured. */
  private size(chunk: Chunk): void {
    if (chunk.drawn) return;
    const perEntry = this.measuredEntries ? this.measuredPx / this.measuredEntries : ENTRY_PX;
    chunk.el.style.height = `${chunk.height ?? Math.round(chunk.ids.size * perEntry)}px`;
  }

  private undraw(chunk: Chunk, height: number): void {
    this.painter.drop(chunk);
    chunk.el.replaceChildren();
    chunk.el.classList.add('undrawn');
    chunk.drawn = false;
    chunk.height = height;
    this.drawn.delete(chunk);
    this.measuredPx += height;
    this.measuredEntries += chunk.ids.size;
    this.size(chunk);
  }

  /** The chunks that reach into [top, bottom] (screen coordinates), with their boxes. */
  private between(top: number, bottom: number): { chunk: Chunk; box: DOMRect }[] {
    const found: { chunk: Chunk; box: DOMRect }[] = [];
    for (let i = this.firstEndingBelow(top); i < this.chunks.length; i++) {
      const chunk = this.chunks[i]!;
      const box = chunk.el.getBoundingClientRect();
      if (box.top > bottom) break;
      found.push({ chunk, box });
    }
    return found;
  }

  /** The index of the first chunk whose bottom is below `y` (found by halving). */
  private firstEndingBelow(y: number): number {
    let low = 0;
    let high = this.chunks.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (this.chunks[mid]!.el.getBoundingClientRect().bottom <= y) low = mid + 1;
      else high = mid;
    }
    return low;
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
   * may change its height: an entry below it stays put), else the first chunk in view.
   */
  private anchor(): Anchor | undefined {
    const view = this.scroller.getBoundingClientRect();
    const first = this.firstEndingBelow(view.top);
    for (let i = first; i < this.chunks.length; i++) {
      const chunk = this.chunks[i]!;
      const box = chunk.el.getBoundingClientRect();
      if (box.top > view.bottom) break;
      if (!chunk.drawn) continue;
      const entry = firstEndingBelow(chunk.el.children, view.top);
      if (entry) return { el: entry, top: entry.getBoundingClientRect().top };
    }
    const chunk = this.chunks[first];
    return chunk && { el: chunk.el, top: chunk.el.getBoundingClientRect().top };
  }
}

/** The first of `items` (top to bottom) whose bottom is below `y`. */
function firstEndingBelow(items: HTMLCollection, y: number): Element | undefined {
  let low = 0;
  let high = items.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (items[mid]!.getBoundingClientRect().bottom <= y) low = mid + 1;
    else high = mid;
  }
  return items[low];
}

function fragment(els: HTMLElement[]): DocumentFragment {
  const made = document.createDocumentFragment();
  made.append(...els);
  return made;
}
