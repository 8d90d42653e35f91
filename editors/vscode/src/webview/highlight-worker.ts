// The entry of dist/highlight.js: a Web Worker the page starts (./highlighter) that highlights
// code blocks off the page's thread. Compiling a language's grammar on its first use took up
// to 45 ms of that thread (Java's: 50 ms in Node), in a task of its own that held keys and
// scrolling as a long chat opened (issue 43); here it delays that block's colours alone.

import { codeRuns } from './code-tokens';
import { highlight, languageNamed } from './highlight';
import type { HighlightAnswer, HighlightRequest } from './highlighter';

/** The coloured runs of `code` as the language `lang` names (none for a language not known). */
export function answer({ id, code, lang }: HighlightRequest): HighlightAnswer {
  const name = languageNamed(lang);
  if (!name) return { id, runs: [] };
  const read = codeRuns(highlight(code, name));
  // Anything but the text and its spans would have moved the offsets: no colours rather than wrong ones.
  return { id, runs: read.length === code.length ? read.runs : [] };
}

// Only a worker's global scope has importScripts: tests import this module in Node.
if ('importScripts' in globalThis) {
  self.addEventListener('message', (event: MessageEvent<HighlightRequest>) => {
    self.postMessage(answer(event.data));
  });
}
