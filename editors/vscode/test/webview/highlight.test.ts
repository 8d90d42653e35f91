// Code blocks are highlighted with highlight.js's common languages, each registered the first
// time a block names it: a highlighter that starts registers none (issue 43), and a block
// highlights as it did with every common language registered up front (highlight.js/lib/common).
// The page colours the runs read back from highlight.js's HTML (src/webview/code-tokens.ts),
// which the highlighter's worker answers (src/webview/highlight-worker.ts).

import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import hljs from 'highlight.js/lib/core';
import type { HLJSApi, LanguageFn } from 'highlight.js';
// dist/highlight.js's entry, the worker the page starts.
import { answer } from '../../src/webview/highlight-worker';
import { highlight, languageNamed, LANGUAGES } from '../../src/webview/highlight';
import { codeRuns, type CodeKind } from '../../src/webview/code-tokens';

/** What the worker's script registered as it was evaluated (before any test highlighted anything). */
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

/** The HTML of `code` as `reference` highlights it as `lang`. */
function expected(reference: HLJSApi, code: string, lang: string): string {
  return reference.highlight(code, { language: lang, ignoreIllegals: true }).value;
}

describe('code highlighting', () => {
  it('registers no language as the highlighter starts', () => {
    assert.deepEqual(registeredAtLoad, []);
  });

  it("answers a block's request with its runs, by any name of its language, and with none for a language it does not know", () => {
    const code = 'def f(x):\n    return x  # done\n';
    const runs = codeRuns(highlight(code, languageNamed('python')!)).runs;
    assert.ok(runs.length > 0);
    assert.deepEqual(answer({ id: 7, code, lang: 'py' }), { id: 7, runs });
    assert.deepEqual(answer({ id: 8, code, lang: 'PYTHON' }), { id: 8, runs });
    assert.deepEqual(answer({ id: 9, code, lang: 'no-such-language' }), { id: 9, runs: [] });
    assert.deepEqual(answer({ id: 10, code, lang: '' }), { id: 10, runs: [] });
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
    const code = '<script>const x = 1;</script>\n<style>a { color: red; }</style>';
    const html = highlight(code, languageNamed('html')!);
    assert.equal(html, expected(common(), code, 'html'));
    assert.deepEqual(coloured(code, html, 'keyword'), ['const', 'a']);
  });

  it('highlights a block as with every common language registered, by any of its names', () => {
    const reference = common();
    const code = 'let x = "a" + 1 // comment\n<div class="a">b</div>';
    for (const name of reference.listLanguages()) {
      for (const lang of [name, ...(reference.getLanguage(name)!.aliases ?? [])]) {
        assert.equal(highlight(code, languageNamed(lang)!), expected(reference, code, lang), lang);
      }
    }
  });
});

/** The texts of `code` that highlight.js's `html` colours as `kind`. */
function coloured(code: string, html: string, kind: CodeKind): string[] {
  const { runs, length } = codeRuns(html);
  assert.equal(length, code.length, 'the runs cover the text');
  return runs.filter((r) => r.kind === kind).map((r) => code.slice(r.start, r.end));
}

describe('code runs from highlight.js', () => {
  it('gives each coloured token of a block with its offsets in the text', () => {
    const code = 'def f(x: int) -> str:\n    return "<%s>" % x  # a & b\n';
    const html = highlight(code, languageNamed('python')!);
    assert.deepEqual(coloured(code, html, 'keyword'), ['def', 'int', 'str', 'return']);
    assert.deepEqual(coloured(code, html, 'function'), ['f']);
    assert.deepEqual(coloured(code, html, 'string'), ['"<%s>"']);
    assert.deepEqual(coloured(code, html, 'comment'), ['# a & b']);
  });

  it("gives a span without a colour of its own its parent's, and a nested one its own", () => {
    const html =
      '<span class="hljs-params">(a: <span class="hljs-built_in">int</span><span class="hljs-punctuation">,</span> b)</span>';
    assert.deepEqual(codeRuns(html).runs, [
      { start: 0, end: 4, kind: 'variable' },
      { start: 4, end: 7, kind: 'keyword' },
      { start: 7, end: 11, kind: 'variable' },
    ]);
  });

  it('tells a class title from a function title', () => {
    const code = 'class Greeter(Base):\n    def greet(self): pass\n';
    const html = highlight(code, languageNamed('python')!);
    assert.deepEqual(coloured(code, html, 'type'), ['Greeter', 'Base']);
    assert.deepEqual(coloured(code, html, 'function'), ['greet']);
  });

  it('counts an escaped character as one, so the offsets match the text', () => {
    assert.deepEqual(codeRuns('a &lt; <span class="hljs-string">&quot;&amp;&#x27;&quot;</span>'), {
      runs: [{ start: 4, end: 8, kind: 'string' }],
      length: 8,
    });
  });
});
