// The entry of dist/highlight.js: highlight.js and its languages (./highlight), bundled apart
// from the page's script and loaded beside it (index.html.ts: an async script). Evaluating
// highlight.js took ~30 of the ~40 ms the page's script held the thread for as a chat opened
// (issue 43): apart, that is a task of its own, run as soon as the file is in, while the page's
// own script draws the chat. It hands the page its two functions (./highlighter).

import { publish } from './highlighter';
import { highlight, languageNamed } from './highlight';

publish({ highlight, languageNamed });
