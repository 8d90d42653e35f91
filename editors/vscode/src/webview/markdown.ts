// Markdown of answers and plans: markdown-it (raw HTML off: the model's text is never
// markup), code blocks highlighted with highlight.js and given a language label and a
// copy button.
//
// An answer that streams is re-rendered at most once per frame, and only its tail: the
// part before the last blank line outside a code fence cannot change any more, so it is
// rendered once into "frozen" chunks and kept. When the answer is complete it is rendered
// once as a whole (a list split over two chunks then joins up again).

import hljs from 'highlight.js/lib/common';
import MarkdownIt from 'markdown-it';

const md = new MarkdownIt({
  html: false,
  linkify: true,
  breaks: false,
  highlight: (code, lang) => {
    const language = lang && hljs.getLanguage(lang) ? lang : null;
    // Only a named language: guessing one (highlightAuto) costs too much on every frame.
    return language ? hljs.highlight(code, { language, ignoreIllegals: true }).value : '';
  },
});

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

/** Where the text can be cut so that the part before never renders differently: after the
 * last blank line that is not inside a code fence, at or after `from` (which is such a place). */
export function stableCut(text: string, from: number): number {
  let cut = from;
  let fence: string | null = null;
  let at = from;
  while (at < text.length) {
    const end = text.indexOf('\n', at);
    if (end < 0) break; // the last line may still grow
    const line = text.slice(at, end);
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (fence === null || (marker[0] === fence[0] && marker.length >= fence.length))) {
      fence = fence === null ? marker : null;
    } else if (fence === null && line.trim() === '') {
      cut = end + 1;
    }
    at = end + 1;
  }
  return cut;
}

/** One markdown block on the page, cheap to update while its text streams. */
export class MarkdownView {
  readonly el: HTMLElement;
  private readonly frozen: HTMLElement;
  private readonly live: HTMLElement;
  /** How much of the source `frozen` shows; -1: `frozen` shows the complete text. */
  private frozenLength = 0;
  private shown: string | null = null;

  constructor(className: string) {
    this.el = document.createElement('div');
    this.el.className = `markdown ${className}`;
    this.frozen = document.createElement('div');
    this.live = document.createElement('div');
    this.el.append(this.frozen, this.live);
  }

  set(text: string, streaming: boolean): void {
    if (text === this.shown && streaming === this.frozenLength >= 0) return;
    this.shown = text;
    if (!streaming) {
      this.frozen.innerHTML = renderMarkdown(text);
      this.live.replaceChildren();
      this.frozenLength = -1;
      return;
    }
    // A streamed text only grows; anything else starts over.
    if (this.frozenLength < 0 || text.length < this.frozenLength) {
      this.frozen.replaceChildren();
      this.frozenLength = 0;
    }
    const cut = stableCut(text, this.frozenLength);
    if (cut > this.frozenLength) {
      const chunk = document.createElement('div');
      chunk.innerHTML = renderMarkdown(text.slice(this.frozenLength, cut));
      this.frozen.append(...chunk.childNodes);
      this.frozenLength = cut;
    }
    this.live.innerHTML = renderMarkdown(text.slice(this.frozenLength));
  }
}
