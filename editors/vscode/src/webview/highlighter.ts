// The code highlighter as the page's script sees it: dist/highlight.js (./highlight-script)
// loads beside the page's script and hands over its functions when it has run, which may be
// before or after the page's first render. Until then code blocks are drawn without colours
// and named ones are coloured once it comes (whenHighlighter).

/** What dist/highlight.js gives: ./highlight's functions. */
export interface Highlighter {
  /** The language a code block names (any of its names), registered; undefined for none. */
  languageNamed(lang: string): string | undefined;
  /** The code's HTML highlighted as language `name` (as languageNamed gave it). */
  highlight(code: string, name: string): string;
}

/** Where the two scripts meet: a global, as they are two bundles on one page. */
const KEY = Symbol.for('claude-sidecar.highlighter');

type Holder = { [KEY]?: Highlighter | ((h: Highlighter) => void)[] };

const holder = globalThis as Holder;

/** The highlighter, once its script has run. */
export function highlighter(): Highlighter | undefined {
  const held = holder[KEY];
  return Array.isArray(held) ? undefined : held;
}

/** Calls `then` with the highlighter: at once when it is here, else when its script has run. */
export function whenHighlighter(then: (h: Highlighter) => void): void {
  const held = holder[KEY];
  if (held === undefined) holder[KEY] = [then];
  else if (Array.isArray(held)) held.push(then);
  else then(held);
}

/** Hands the highlighter to the page (dist/highlight.js does, when it runs). */
export function publish(h: Highlighter): void {
  const waiting = holder[KEY];
  holder[KEY] = h;
  if (Array.isArray(waiting)) for (const then of waiting) then(h);
}
