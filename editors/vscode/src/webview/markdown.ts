// Markdown of answers and plans: markdown-it (raw HTML off: the model's text is never
// markup); code blocks are given a language label and a copy button, and are coloured apart
// from the markup, while near the view (./code-colours).
//
// An answer that streams is rendered in pieces that are never rendered again: the part
// before a place where markdown cannot join across (a blank line outside a code fence
// followed by a line that starts a new block) renders the same alone as in the whole, so
// it is rendered once into a "frozen" chunk and kept; only the tail after the last such
// place is re-rendered, at most once per frame, and its code is not coloured (a long code
// block being written would be highlighted again on every frame). When the answer is
// complete only that tail is rendered once more: the whole is never rendered twice. More
// new text than a frame should take (SLICE_CHARS: a page that fell behind, a chat opened with
// long answers) is drawn a slice a frame; in an answer that streams, its end first (the view
// follows it), the part before it after.

import MarkdownIt from 'markdown-it';
import { watchCode } from './code-colours';

const md = new MarkdownIt({ html: false, linkify: true, breaks: false });

const defaultFence = md.renderer.rules.fence!;
md.renderer.rules.fence = (tokens, idx, options, env, self) => {
  const lang = md.utils.escapeHtml(tokens[idx]?.info.trim().split(/\s+/)[0] ?? '');
  return (
    `<div class="code-block"><div class="code-head"><span class="code-lang">${lang}</span>` +
    '<button type="button" class="copy-code" title="Copy code" aria-label="Copy code">Copy</button></div>' +
    `${defaultFence(tokens, idx, options, env, self)}</div>`
  );
};

// Every link shows where it goes on hover (main.ts opens file links in an editor; VS Code opens web links).
const defaultLinkOpen =
  md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  const token = tokens[idx];
  token?.attrSet('title', token.attrGet('href') ?? '');
  return defaultLinkOpen(tokens, idx, options, env, self);
};

export function renderMarkdown(text: string): string {
  return md.render(text);
}

/**
 * Does, while the page is idle, what the first render would: compiles markdown-it's code,
 * which would otherwise land in the first frames of the first answer. (The languages'
 * grammars compile in the highlighter's worker: ./highlighter.)
 */
export function warmUp(): void {
  requestIdleCallback(() => md.render('# x\n\n- *a* [b](c) `d`\n\n| e |\n|---|\n| f |\n\n```\ny\n```\n'));
}

/** A line that may continue the block above it across a blank line: indented (a list
 * item's paragraph, indented code) or a list item (a loose list). */
const CONTINUES = /^(?:[ \t]|[-+*][ \t]|\d{1,9}[.)][ \t])/;

/**
 * The places after `from` (which is one) where the text can be cut so that the part before
 * never renders differently, in order: before a line that follows a blank line outside a
 * code fence and cannot continue the block above (see CONTINUES). The last line, which may
 * still grow, is never cut before.
 */
function* stableCuts(text: string, from: number): Generator<number> {
  let fence: string | null = null;
  let afterBlank = false;
  let at = from;
  while (at < text.length) {
    const end = text.indexOf('\n', at);
    if (end < 0) break; // the last line may still grow
    const line = text.slice(at, end);
    if (fence === null && afterBlank && line.trim() !== '' && !CONTINUES.test(line)) yield at;
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (fence === null || (marker[0] === fence[0] && marker.length >= fence.length))) {
      fence = fence === null ? marker : null;
    }
    afterBlank = fence === null && line.trim() === '';
    at = end + 1;
  }
}

/** The stable cuts after `from` (which is one) and before `below`, in order. */
function* cutsBefore(text: string, from: number, below: number): Generator<number> {
  for (const at of stableCuts(text, from)) {
    if (at >= below) return;
    yield at;
  }
}

/** The last stable cut of the text at or after `from` (which is one): see stableCuts. */
export function stableCut(text: string, from: number): number {
  let cut = from;
  for (const at of stableCuts(text, from)) cut = at;
  return cut;
}

/**
 * The first stable cut after `from` (which is one) at or after `least`; when there is none,
 * the last one before it (a block that starts before `least` and is longer than what is left
 * of the text: it cannot be cut), `from` when there is none at all.
 */
export function stableCutFrom(text: string, from: number, least: number): number {
  let cut = from;
  for (const at of stableCuts(text, from)) {
    cut = at;
    if (at >= least) break;
  }
  return cut;
}

/**
 * The most new text drawn in one frame (about 15 ms of a frame's work in all: parsing,
 * styling and laying it out). More comes at once when the page fell behind (the host then
 * sends what gathered as one batch: the end of an answer that streams is drawn first, what
 * the user looks at) or when a chat opens with long answers: it is drawn a slice a frame,
 * between which the page takes the user's keys.
 */
export const SLICE_CHARS = 6_000;

/** A part of the text not drawn yet, before the end drawn: it shows what the page had drawn
 * of it before (nothing goes away) until it is drawn, a slice a frame from its start. */
interface Gap {
  from: number;
  readonly to: number;
  /** The end of what it shows of its text (from `from`: the tail drawn before; `from`: none). */
  shown: number;
  readonly el: HTMLElement;
}

/** One markdown block on the page, cheap to update while its text streams. */
export class MarkdownView {
  readonly el: HTMLElement;
  private readonly frozen: HTMLElement;
  private readonly live: HTMLElement;
  /** The start of the text that `frozen` holds, rendered once and kept (gaps still to draw in it). */
  private frozenText = '';
  /** The parts of `frozenText` not drawn yet, in order. */
  private gaps: Gap[] = [];
  /** What `live` shows (the text after `frozenText`, and whether streaming). */
  private liveShown: string | null = null;
  /** The HTML `live` was drawn from ('' when it holds other nodes: a gap took them). */
  private liveHtml = '';
  private shown: string | null = null;
  private complete = false;
  /** Whether `shown` is drawn whole (not only its first slices). */
  private whole = false;
  /** How much of the text the page shows (frozen and tail): a slice never shows less. */
  private drawnTo = 0;

  constructor(className: string) {
    this.el = document.createElement('div');
    this.el.className = `markdown ${className}`;
    this.frozen = document.createElement('div');
    this.live = document.createElement('div');
    this.live.className = 'md-tail';
    this.el.append(this.frozen, this.live);
  }

  /**
   * Shows `text` (a streaming one's unfinished tail without highlighting). With `slice`
   * (SLICE_CHARS for an answer), at most about that much new text is drawn a call, in order,
   * or with `endFirst` (an answer the user saw streaming: the view follows its end) its end
   * first and the part before it after; false until all of it is drawn (the caller calls
   * again, in the next frame, for the rest).
   */
  set(text: string, streaming: boolean, slice = Infinity, endFirst = false): boolean {
    if (text === this.shown && this.complete === !streaming && this.whole) return true;
    this.shown = text;
    this.complete = !streaming;
    // A streamed text only grows; anything else starts over.
    if (!text.startsWith(this.frozenText)) {
      this.frozen.replaceChildren();
      this.frozenText = '';
      this.gaps = [];
      this.liveShown = null;
      this.liveHtml = '';
      this.drawnTo = 0;
    }
    const from = this.frozenText.length;
    if (text.length - from > slice) {
      // Too much for one frame: its end first (the view follows the end), the part before it
      // left as a gap (drawn in the next frames). Not when what the tail shows reaches past
      // the end's start (one block longer than a slice being written): it would show twice.
      // A text drawn anew (a chat opened, a chunk of the chat back in view) goes in order:
      // the place of what follows it in the page is known only once it is drawn.
      const end = endFirst ? stableCutFrom(text, from, text.length - slice) : from;
      if (end > from && end >= this.drawnTo) {
        this.leaveGap(text, end);
      } else {
        const cut = stableCut(text.slice(0, from + slice), from);
        if (cut > from) {
          // The finished blocks of the next slice only, the rest later; the tail keeps what it
          // showed past the slice (drawn as a streaming tail is), so nothing on screen goes
          // away until the slices reach it.
          this.freeze(text, cut);
          this.drawnTo = Math.max(this.drawnTo, cut);
          this.showLive(text.slice(cut, this.drawnTo), true);
          this.whole = false;
          return false;
        }
        // One block longer than a slice (a long code block): it cannot be cut, drawn as it is.
      }
    }
    const before = this.frozenText.length;
    if (streaming) {
      const cut = stableCut(text, before);
      if (cut > before) this.freeze(text, cut);
    }
    const tail = text.slice(this.frozenText.length);
    const drew = this.showLive(tail, streaming) || this.frozenText.length > before;
    this.drawnTo = text.length;
    // A gap is drawn in a call that drew nothing at the end: the frame that shows the end
    // (the turn's, or the newest text) draws that alone.
    if (this.gaps.length && !drew) this.fillGap(text, slice);
    this.whole = this.gaps.length === 0;
    return this.whole;
  }

  /** Sets the tail, only when it changed (a call that draws a gap leaves it): whether it did. */
  private showLive(tail: string, streaming: boolean): boolean {
    const key = `${streaming ? 's' : 'c'}${tail}`;
    if (key === this.liveShown) return false;
    this.liveShown = key;
    const html = tail ? md.render(tail) : '';
    if (!grewInPlace(this.live, this.liveHtml, html)) this.live.innerHTML = html;
    this.liveHtml = html;
    if (!streaming) watchCode(this.live);
    // The cursor's class is on the tail, not on the entry, and named for it alone: the
    // cursor's rule (`.md-tail.cursor > :last-child::after`) makes a change of its class
    // restyle all of the element's subtree, so that class must never change on an ancestor of
    // the whole answer (the entry's `streaming` did, thousands of elements in the frame that
    // drew the turn's end).
    this.live.classList.toggle('cursor', streaming);
    return true;
  }

  /** Leaves the text from the frozen part's end to `end` (a stable cut) as a gap, showing what
   * the tail showed of it until it is drawn. */
  private leaveGap(text: string, end: number): void {
    const el = document.createElement('div');
    el.className = 'md-gap';
    el.append(...this.live.childNodes);
    this.liveShown = null;
    this.liveHtml = '';
    this.frozen.append(el);
    const from = this.frozenText.length;
    this.gaps.push({ from, to: end, shown: Math.max(from, this.drawnTo), el });
    this.frozenText = text.slice(0, end);
  }

  /** Draws about `budget` characters of the first gap from its start (at least what it showed
   * of its text, which then goes: nothing is shown twice). */
  private fillGap(text: string, budget: number): void {
    const gap = this.gaps[0]!;
    const cuts = [...cutsBefore(text, gap.from, gap.to), gap.to];
    let end = cuts[0]!;
    for (const cut of cuts) {
      if (cut > gap.from + budget && end >= gap.shown) break;
      end = cut;
    }
    gap.el.before(this.chunk(text.slice(gap.from, end)));
    gap.el.replaceChildren();
    gap.from = gap.shown = end;
    if (gap.from === gap.to) {
      gap.el.remove();
      this.gaps.shift();
    }
  }

  /** Draws the text from the frozen part's end to `cut` (a stable cut) as a chunk of its own, kept. */
  private freeze(text: string, cut: number): void {
    this.frozen.append(this.chunk(text.slice(this.frozenText.length, cut)));
    this.frozenText = text.slice(0, cut);
  }

  /** A finished piece of the text, rendered once. */
  private chunk(text: string): HTMLElement {
    // A chunk of its own: once off screen, the page skips its layout (style.css).
    const chunk = document.createElement('div');
    chunk.className = 'md-chunk';
    chunk.innerHTML = md.render(text);
    watchCode(chunk);
    return chunk;
  }
}

/** The closing tags (and the line ends between them) that end rendered markdown. */
const CLOSING = /(?:<\/[a-z][a-z0-9]*>\s*)*$/;

/** What markdown-it escapes in text (always whole: a text it wrote never ends inside one). */
const ESCAPED = /&(amp|lt|gt|quot);/g;
const UNESCAPED: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"' };

/**
 * Draws `html` into `el`, which shows `before`, by growing its last text alone when `html` is
 * `before` with more text at the end of it and no new markup (a streaming paragraph or code
 * block, most frames): the tail's elements are not made, styled and laid out again. False when
 * it cannot (the caller sets the whole HTML).
 */
function grewInPlace(el: HTMLElement, before: string, html: string): boolean {
  if (!before || html.length <= before.length) return false;
  const closing = CLOSING.exec(before)![0];
  const textStart = before.lastIndexOf('>', before.length - closing.length - 1) + 1;
  const kept = before.slice(0, before.length - closing.length);
  if (!html.startsWith(kept) || !html.endsWith(closing)) return false;
  const added = html.slice(kept.length, html.length - closing.length);
  if (added.includes('<')) return false;
  const text = lastText(el);
  const shown = unescaped(before.slice(textStart, kept.length));
  if (!text || text.data !== shown) return false;
  text.appendData(unescaped(added));
  return true;
}

function unescaped(html: string): string {
  return html.replace(ESCAPED, (_, name: string) => UNESCAPED[name]!);
}

/** The last text of `el` that is not the line end between two blocks. */
function lastText(el: Node): Text | null {
  let node = el.lastChild;
  while (node) {
    if (node.nodeType === Node.TEXT_NODE) {
      if ((node as Text).data.trim() || !node.previousSibling) return node as Text;
      node = node.previousSibling;
    } else if (node.nodeType === Node.ELEMENT_NODE && node.lastChild) {
      node = node.lastChild;
    } else {
      return null;
    }
  }
  return null;
}
