// highlight.js's HTML of a code block read back as runs of the block's text, each with the
// colour it takes: the page colours code with ranges of its one text node (./code-colours),
// not with highlight.js's spans. A span with no colour of its own takes its parent's, as it
// did in CSS.

/** The colours of code: the page's highlights are named `code-<kind>` (style.css). */
export const CODE_KINDS = [
  'keyword',
  'string',
  'number',
  'comment',
  'function',
  'type',
  'variable',
  'meta',
  'addition',
  'deletion',
] as const;

export type CodeKind = (typeof CODE_KINDS)[number];

/** A run of the code's text, from `start` to `end` (UTF-16 offsets), and its colour. */
export interface CodeRun {
  start: number;
  end: number;
  kind: CodeKind;
}

const BY_CLASS: Readonly<Record<string, CodeKind>> = {
  'hljs-keyword': 'keyword',
  'hljs-selector-tag': 'keyword',
  'hljs-built_in': 'keyword',
  'hljs-literal': 'keyword',
  'hljs-string': 'string',
  'hljs-template-string': 'string',
  'hljs-regexp': 'string',
  'hljs-number': 'number',
  'hljs-comment': 'comment',
  'hljs-quote': 'comment',
  'hljs-section': 'function',
  'hljs-type': 'type',
  'hljs-attr': 'type',
  'hljs-attribute': 'type',
  'hljs-variable': 'variable',
  'hljs-params': 'variable',
  'hljs-property': 'variable',
  'hljs-meta': 'meta',
  'hljs-symbol': 'meta',
  'hljs-addition': 'addition',
  'hljs-deletion': 'deletion',
};

/** The colour of a span by its classes (`hljs-title class_`); undefined: its parent's. */
function kindOf(classes: string): CodeKind | undefined {
  const names = classes.split(' ');
  // A title names a function, or a class (`title.class_`, highlight.js's scope).
  if (names.includes('hljs-title')) return names.includes('class_') ? 'type' : 'function';
  for (const name of names) {
    const kind = BY_CLASS[name];
    if (kind) return kind;
  }
  return undefined;
}

/** A span's start or end, a character highlight.js escapes (its escapeHTML: one character
 * each), or text. */
const PIECE = /<span class="([^"]*)">|<\/span>|(&(?:amp|lt|gt|quot|#x27|#39);)|[^<&]+/g;

/**
 * The coloured runs of highlight.js's `html` in order, adjacent runs of one colour joined, and
 * the length of the text it holds: a caller checks it against the block's text (anything
 * but spans and escaped text would be skipped, and the offsets would be wrong).
 */
export function codeRuns(html: string): { runs: CodeRun[]; length: number } {
  // Each open span's colour, its own or its parent's.
  const open: (CodeKind | undefined)[] = [];
  const runs: CodeRun[] = [];
  let at = 0;
  for (const [piece, classes, entity] of html.matchAll(PIECE)) {
    if (classes !== undefined) {
      open.push(kindOf(classes) ?? open.at(-1));
      continue;
    }
    if (piece === '</span>') {
      open.pop();
      continue;
    }
    const length = entity !== undefined ? 1 : piece.length;
    const kind = open.at(-1);
    if (kind) {
      const last = runs.at(-1);
      if (last?.kind === kind && last.end === at) last.end += length;
      else runs.push({ start: at, end: at + length, kind });
    }
    at += length;
  }
  return { runs, length: at };
}
