// Code blocks coloured without elements of their own: highlight.js's tokens (./code-tokens)
// become ranges of the block's text, painted through the CSS Custom Highlight API (style.css:
// ::highlight(code-keyword), ...). As highlight.js's spans, the code of a 60 KB answer was
// 4,672 of its 6,351 elements, each styled, laid out and painted as the answer streamed:
// a third of the page's thread (750 -> 510 ms of CPU in 1.8 s without them, issue 43).
//
// Only blocks near the view hold ranges: an IntersectionObserver colours a block as it comes
// into reach and lets its ranges go when it leaves, so that what the browser keeps in step
// with the page stays small however long the chat. A block in reach is sent to the
// highlighter (a worker: ./highlighter) when the page is next idle (at the latest
// IDLE_TIMEOUT_MS after) and coloured when its runs come back, if it is still in reach; a
// streaming answer's tail is never watched (it is drawn again every frame: ./markdown).

import { CODE_KINDS, type CodeKind, type CodeRun } from './code-tokens';
import { highlightCode, highlighterRunning, whenHighlighterRuns } from './highlighter';

/** The code blocks of rendered markdown (markdown-it names the language in the class). */
const CODE_SELECTOR = '.code-block pre > code[class^="language-"]';

/** How far out of view a block is coloured ahead (scroll containers' margin, where supported). */
const AHEAD = '400px 0px';

/** A block in view is coloured within this long, idle or not. */
const IDLE_TIMEOUT_MS = 250;

/** Every so many blocks watched, those no longer in the page are let go. */
const SWEEP_EVERY = 64;

const supported = typeof CSS !== 'undefined' && 'highlights' in CSS && typeof IntersectionObserver !== 'undefined';

/** One highlight per colour, registered as `code-<kind>`. */
const highlights = new Map<CodeKind, Highlight>();
/** The ranges of each block coloured now. */
const held = new Map<Element, [Highlight, StaticRange][]>();
/** Each block's runs, once highlight.js gave them: a block coloured again is not highlighted again. */
const runsOf = new WeakMap<Element, CodeRun[]>();
/** The blocks observed, and whether each was in the page at an observer's answer: one that
 * was and is no longer is let go (a view may be drawn before it is placed). */
const watched = new Map<Element, boolean>();
/** Blocks in reach not coloured yet: sent to the highlighter while the page is idle (once it runs). */
const waiting = new Set<Element>();
/** Blocks in reach (the observer's last word), coloured or not. */
const inReach = new Set<Element>();
/** Blocks sent to the highlighter whose runs have not come back. */
const asked = new Set<Element>();
/** An idle callback is asked for. */
let idle = 0;
let observer: IntersectionObserver | undefined;
let sinceSweep = 0;

function start(): IntersectionObserver {
  for (const kind of CODE_KINDS) {
    const highlight = new Highlight();
    highlights.set(kind, highlight);
    CSS.highlights.set(`code-${kind}`, highlight);
  }
  whenHighlighterRuns(() => colourWhenIdle());
  // scrollMargin (Chromium 120+) widens the transcript's clip too, not only the viewport's.
  const options = { scrollMargin: AHEAD } as IntersectionObserverInit;
  return new IntersectionObserver((entries) => {
    for (const { target, isIntersecting } of entries) {
      if (!target.isConnected) {
        if (watched.get(target)) forget(target);
        continue;
      }
      watched.set(target, true);
      if (!isIntersecting) uncolour(target);
      else {
        inReach.add(target);
        if (!held.has(target)) waiting.add(target);
      }
    }
    colourWhenIdle();
  }, options);
}

/**
 * Colours the blocks waiting while the page is idle: a block coloured as it comes into view
 * took its ranges' time from a frame or a key, and during a fast answer most blocks pass the
 * view before the page is idle (they are then not coloured at all).
 */
function colourWhenIdle(): void {
  if (idle || !waiting.size || !highlighterRunning()) return;
  idle = requestIdleCallback(
    (deadline) => {
      idle = 0;
      for (const code of waiting) {
        if (deadline.timeRemaining() < 1 && !deadline.didTimeout) break;
        waiting.delete(code);
        if (code.isConnected) colour(code);
      }
      colourWhenIdle();
    },
    { timeout: IDLE_TIMEOUT_MS },
  );
}

/** Colours the code blocks under `root` while they are near the view, from now on. */
export function watchCode(root: ParentNode): void {
  if (!supported) return;
  observer ??= start();
  for (const code of root.querySelectorAll(CODE_SELECTOR)) {
    if (watched.has(code)) continue;
    watched.set(code, code.isConnected);
    observer.observe(code);
    sinceSweep++;
  }
  if (sinceSweep >= SWEEP_EVERY) {
    sinceSweep = 0;
    for (const [code, placed] of watched) if (placed && !code.isConnected) forget(code);
  }
}

/** Colours a block in reach: with the runs it had, else once the highlighter gives them. */
function colour(code: Element): void {
  if (held.has(code) || asked.has(code)) return;
  const runs = runsOf.get(code);
  if (runs) {
    held.set(code, runs.length ? ranges(code, runs) : []);
    return;
  }
  asked.add(code);
  const lang = /(?:^| )language-(\S+)/.exec(code.className)?.[1] ?? '';
  highlightCode(code.textContent, lang, (given) => {
    asked.delete(code);
    runsOf.set(code, given);
    // Out of reach (or out of the page) since it was asked for: coloured when it comes back.
    if (inReach.has(code) && code.isConnected && !held.has(code)) {
      held.set(code, given.length ? ranges(code, given) : []);
    }
  });
}

/** The runs as ranges of the block's text nodes (one, unless the HTML parser split a long text). */
function ranges(code: Element, runs: readonly CodeRun[]): [Highlight, StaticRange][] {
  const nodes: { node: Text; from: number }[] = [];
  const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
  for (let from = 0, node = walker.nextNode() as Text | null; node; node = walker.nextNode() as Text | null) {
    nodes.push({ node, from });
    from += node.length;
  }
  let i = 0;
  // Runs come in order: the node of an offset is found walking forward.
  const at = (offset: number, end: boolean): [Text, number] => {
    while (i + 1 < nodes.length && (end ? offset > nodes[i + 1]!.from : offset >= nodes[i + 1]!.from)) i++;
    return [nodes[i]!.node, offset - nodes[i]!.from];
  };
  return runs.map((run) => {
    const [startContainer, startOffset] = at(run.start, false);
    const [endContainer, endOffset] = at(run.end, true);
    // Static ranges: a live Range is updated by every change to the document.
    const range = new StaticRange({ startContainer, startOffset, endContainer, endOffset });
    const highlight = highlights.get(run.kind)!;
    highlight.add(range);
    return [highlight, range];
  });
}

function uncolour(code: Element): void {
  waiting.delete(code);
  inReach.delete(code);
  for (const [highlight, range] of held.get(code) ?? []) highlight.delete(range);
  held.delete(code);
}

function forget(code: Element): void {
  uncolour(code);
  observer?.unobserve(code);
  watched.delete(code);
}
