// Code highlighting as the page sees it: a Web Worker running dist/highlight.js
// (./highlight-worker) answers a code block's text with its coloured runs, so that
// highlight.js's work (a language's grammar compiled on first use: up to 45 ms) never holds
// the page's thread. A webview may not start a worker from the extension's files (another
// origin than the page's): the page fetches the script and starts it from a blob, as VS Code
// advises for webviews (the CSP allows both: ./index.html.ts). Until the worker runs, code
// blocks are drawn without colours; those in view are coloured once it does (./code-colours).

import type { CodeRun } from './code-tokens';

/** What the page asks the worker: the runs of `code` as the language `lang` names (any of its names). */
export interface HighlightRequest {
  id: number;
  code: string;
  lang: string;
}

/** The worker's answer to request `id` (no runs: a language it does not know). */
export interface HighlightAnswer {
  id: number;
  runs: CodeRun[];
}

let worker: Worker | undefined;
let started = false;
const whenStarted: (() => void)[] = [];
const asked = new Map<number, (runs: CodeRun[]) => void>();
let lastId = 0;

/** Starts the highlighter from dist/highlight.js at `uri` (once per page). */
export function startHighlighter(uri: string): void {
  if (started) return;
  started = true;
  fetch(uri)
    .then((response) => {
      if (!response.ok) throw new Error(`${uri}: HTTP ${response.status}`);
      return response.text();
    })
    .then((source) => {
      const made = new Worker(URL.createObjectURL(new Blob([source], { type: 'text/javascript' })));
      made.addEventListener('message', (event: MessageEvent<HighlightAnswer>) => {
        const then = asked.get(event.data.id);
        asked.delete(event.data.id);
        then?.(event.data.runs);
      });
      made.addEventListener('error', (event) => console.warn(`code highlighter: ${event.message}`));
      worker = made;
      for (const then of whenStarted.splice(0)) then();
    })
    .catch((error: unknown) =>
      console.warn(`code is shown without colours: the highlighter did not start (${String(error)})`),
    );
}

/** Whether the highlighter runs (code can be highlighted). */
export function highlighterRunning(): boolean {
  return worker !== undefined;
}

/** Calls `then` once the highlighter runs (at once when it does). */
export function whenHighlighterRuns(then: () => void): void {
  if (worker) then();
  else whenStarted.push(then);
}

/** Asks for the coloured runs of `code` as language `lang` names: `then` gets them (UTF-16
 * offsets of `code`) when the worker answers; never when the highlighter does not run. */
export function highlightCode(code: string, lang: string, then: (runs: CodeRun[]) => void): void {
  if (!worker) return;
  const id = ++lastId;
  asked.set(id, then);
  worker.postMessage({ id, code, lang } satisfies HighlightRequest);
}
