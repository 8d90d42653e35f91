// Code blocks are highlighted with highlight.js's common languages, each registered the first
// time a block names it: a page that opens registers none (issue 43), and a block highlights
// as it did with every common language registered up front (highlight.js/lib/common).

import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import hljs from 'highlight.js/lib/core';
import type { HLJSApi, LanguageFn } from 'highlight.js';
// The page loads dist/highlight.js beside its script; here it is imported (it hands markdown its highlighter).
import '../../src/webview/highlight-script';
import { renderMarkdown } from '../../src/webview/markdown';
import { LANGUAGES } from '../../src/webview/highlight';

/** What the page's script registered as it was evaluated (before any test rendered anything). */
const registeredAtLoad = hljs.listLanguages();

const require = createRequire(__filename);

/** highlight.js/lib/common's languages in a highlighter of their own: every one registered, as the page had them. */
function common(): HLJSApi {
  const source = fs.readFileSync(require.resolve('highlight.js/lib/common'), 'utf8');
  const all = hljs.newInstance();
  for (const [, name, file] of source.matchAll(/registerLanguage\('([^']+)', require\('\.\/languages\/([^']+)'\)\)/g)) {
    all.registerLanguage(name!, require(`highlight.js/lib/languages/${file}`) as LanguageFn);
  }
  return all;
}

/** The HTML of a code block of `lang` (its code: `code` and its line's end) as `reference` highlights it. */
function expected(reference: HLJSApi, code: string, lang: string): string {
  return reference.highlight(`${code}\n`, { language: lang, ignoreIllegals: true }).value;
}

describe('code highlighting', () => {
  it('registers no language as the page is loaded', () => {
    assert.deepEqual(registeredAtLoad, []);
  });

  it("knows highlight.js's common languages by every name they have", () => {
    const reference = common();
    const names = reference.listLanguages();
    assert.deepEqual(Object.keys(LANGUAGES).sort(), [...names].sort());
    for (const name of names) {
      assert.deepEqual(LANGUAGES[name]!.aliases, reference.getLanguage(name)!.aliases ?? [], name);
    }
  });

  it('highlights the code a language embeds (a script in HTML) the first time a block names that language', () => {
    const reference = common();
    const code = '<script>const x = 1;</script>\n<style>a { color: red; }</style>';
    const html = renderMarkdown(`\`\`\`html\n${code}\n\`\`\`\n`);
    assert.ok(html.includes(expected(reference, code, 'html')));
    assert.match(html, /hljs-keyword">const</);
  });

  it('highlights a block as with every common language registered, by any of its names', () => {
    const reference = common();
    const code = 'let x = "a" + 1 // comment\n<div class="a">b</div>';
    for (const name of reference.listLanguages()) {
      for (const lang of [name, ...(reference.getLanguage(name)!.aliases ?? [])]) {
        const html = renderMarkdown(`\`\`\`${lang}\n${code}\n\`\`\`\n`);
        assert.ok(html.includes(expected(reference, code, lang)), lang);
      }
    }
  });
});
