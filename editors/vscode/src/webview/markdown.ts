// Markdown of answers and plans: markdown-it (raw HTML off: the model's text is never
// markup), code blocks highlighted with highlight.js and given a language label and a
// copy button.
//
// An answer that streams is rendered in pieces that are never rendered again: the part
// before a place where markdown cannot join across (a blank line outside a code fence
// followed by a line that starts a new block) renders the same alone as in the whole, so
// it is rendered once into a "frozen" chunk and kept; only the tail after the last such
// place is re-rendered, at most once per frame, and without highlighting (a long code
// block being written would be highlighted again on every frame). When the answer is
// complete only that tail is rendered once more: the whole is never rendered twice. More
// new text than a frame should take (SLICE_CHARS) is drawn a slice a frame.

import hljs from 'highlight.js/lib/common';
import MarkdownIt from 'markdown-it';

const md = new MarkdownIt({
  html: false,
  linkify: true,
  breaks: false,
  highlight: (code, lang) => {
    const language = lang && hljs.getLanguage(lang) ? lang : null;
    // Only a named language: guessing one (highlightAuto) costs too much.
    return language ? hljs.highlight(code, { language, ignoreIllegals: true }).value : '';
  },
});
/** The same rules without highlighting, for the tail of a text that still streams. */
const plain = new MarkdownIt({ html: false, linkify: true, breaks: false });

for (const it of [md, plain]) {
  const defaultFence = it.renderer.rules.fence!;
  it.renderer.rules.fence = (tokens, idx, options, env, self) => {
    const lang = it.utils.escapeHtml(tokens[idx]?.info.trim().split(/\s+/)[0] ?? '');
    return (
      `<div class="code-block"><div class="code-head"><span class="code-lang">${lang}</span>` +
      '<button type="button" class="copy-code" title="Copy code" aria-label="Copy code">Copy</button></div>' +
      `${defaultFence(tokens, idx, options, env, self)}</div>`
    );
  };

  // Every link shows where it goes on hover (main.ts opens file links in an editor; VS Code opens web links).
  const defaultLinkOpen =
    it.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
  it.renderer.rules.link_open = (tokens, idx, options, env, self) => {
    const token = tokens[idx];
    token?.attrSet('title', token.attrGet('href') ?? '');
    return defaultLinkOpen(tokens, idx, options, env, self);
  };
}

export function renderMarkdown(text: string): string {
  return md.render(text);
}

/** Languages answers use most: their grammars are compiled on first use. */
const COMMON_LANGUAGES = ['python', 'typescript', 'javascript', 'bash', 'json', 'rust', 'go', 'java'];

/**
 * Renders a little of everything once, one language at a time while the page is idle: the
 * first render compiles markdown-it's and highlight.js's code and each language's grammar,
 * which would otherwise land in the first frames of the first answer.
 */
export function warmUp(): void {
  const languages = [...COMMON_LANGUAGES];
  const next = () => {
    const language = languages.shift();
    if (!language) return;
    md.render(`# x\n\n- *a* [b](c) \`d\`\n\n| e |\n|---|\n| f |\n\n\`\`\`${language}\nlet x = 1\n\`\`\`\n`);
    plain.render('x\n\n```\ny\n```\n');
    requestIdleCallback(next);
  };
  requestIdleCallback(next);
}

/** A line that may continue the block above it across a blank line: indented (a list
 * item's paragraph, indented code) or a list item (a loose list). */
const CONTINUES = /^(?:[ \t]|[-+*][ \t]|\d{1,9}[.)][ \t])/;

/**
 * Where the text can be cut so that the part before never renders differently: before a
 * line that follows a blank line outside a code fence and cannot continue the block above
 * (see CONTINUES), at or after `from` (which is such a place). The last line, which may
 * still grow, is never cut before.
 */
export function stableCut(text: string, from: number): number {
  let cut = from;
  let fence: string | null = null;
  let afterBlank = false;
  let at = from;
  while (at < text.length) {
    const end = text.indexOf('\n', at);
    if (end < 0) break; // the last line may still grow
    const line = text.slice(at, end);
    if (fence === null && afterBlank && line.trim() !== '' && !CONTINUES.test(line)) cut = at;
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (fence === null || (marker[0] === fence[0] && marker.length >= fence.length))) {
      fence = fence === null ? marker : null;
    }
    afterBlank = fence === null && line.trim() === '';
    at = end + 1;
  }
  return cut;
}

/**
 * The most new text drawn in one frame (about 15 ms of a frame's work in all: parsing,
 * styling and laying it out). More comes at once when the page fell behind (the host then
 * sends what gathered as one batch) or when a chat opens with long answers: it is drawn a
 * slice a frame, between which the page takes the user's keys.
 */
export const SLICE_CHARS = 6_000;

/** One markdown block on the page, cheap to update while its text streams. */
export class MarkdownView {
  readonly el: HTMLElement;
  private readonly frozen: HTMLElement;
  private readonly live: HTMLElement;
  /** The start of the text that `frozen` shows, rendered once and kept. */
  private frozenText = '';
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
   * (SLICE_CHARS for an answer), at most that much new text is drawn: false when only a
   * slice was, and the caller calls again, in the next frame, for the rest.
   */
  set(text: string, streaming: boolean, slice = Infinity): boolean {
    if (text === this.shown && this.complete === !streaming && this.whole) return true;
    this.shown = text;
    this.complete = !streaming;
    // A streamed text only grows; anything else starts over.
    if (!text.startsWith(this.frozenText)) {
      this.frozen.replaceChildren();
      this.frozenText = '';
      this.drawnTo = 0;
    }
    const from = this.frozenText.length;
    if (text.length - from > slice) {
      // Too much for one frame: the finished blocks of the next slice only, the rest later.
      const cut = stableCut(text.slice(0, from + slice), from);
      if (cut > from) {
        this.freeze(text, cut);
        // The tail keeps what it showed past the slice (drawn as a streaming tail is), so
        // nothing on screen goes away until the slices reach it.
        this.drawnTo = Math.max(this.drawnTo, cut);
        this.live.innerHTML = this.drawnTo > cut ? plain.render(text.slice(cut, this.drawnTo)) : '';
        this.live.classList.toggle('streaming', streaming);
        this.whole = false;
        return false;
      }
      // One block longer than a slice (a long code block): it cannot be cut, drawn as it is.
    }
    if (streaming) {
      const cut = stableCut(text, from);
      if (cut > from) this.freeze(text, cut);
    }
    const tail = text.slice(this.frozenText.length);
    this.live.innerHTML = (streaming ? plain : md).render(tail);
    // The cursor's class is on the tail, not on the entry: a class that changes on an
    // ancestor of the whole answer restyles all of it (thousands of elements when it ends).
    this.live.classList.toggle('streaming', streaming);
    this.drawnTo = text.length;
    this.whole = true;
    return true;
  }

  /** Draws the text from the frozen part's end to `cut` (a stable cut) as a chunk of its own, kept. */
  private freeze(text: string, cut: number): void {
    // A chunk of its own: once off screen, the page skips its layout (style.css).
    const chunk = document.createElement('div');
    chunk.className = 'md-chunk';
    chunk.innerHTML = md.render(text.slice(this.frozenText.length, cut));
    this.frozen.append(chunk);
    this.frozenText = text.slice(0, cut);
  }
}
