// The markdown of a streaming answer is rendered in pieces, each once: the pieces must
// render as the whole text does.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderMarkdown, stableCut } from '../../src/webview/markdown';

/** The text rendered as a streaming view does: cut as it grows by `step` characters, then the tail. */
function inPieces(text: string, step: number): string {
  let html = '';
  let frozen = 0;
  for (let end = step; end < text.length + step; end += step) {
    const cut = stableCut(text.slice(0, Math.min(end, text.length)), frozen);
    if (cut > frozen) {
      html += renderMarkdown(text.slice(frozen, cut));
      frozen = cut;
    }
  }
  return html + renderMarkdown(text.slice(frozen));
}

const SAMPLES: Record<string, string> = {
  'paragraphs and headings': '# Title\n\nOne paragraph\nwrapped.\n\n## Next\n\nAnother one.\n',
  'a loose list': '- one\n\n- two\n\n  more of two\n\n- three\n\nAfter the list.\n',
  'an ordered list': '1. first\n\n2. second\n\n10. tenth\n\nDone.\n',
  'a code fence with blank lines': 'Code:\n\n```python\ndef f():\n\n    return 1\n```\n\nAfter.\n',
  'indented code': 'Text\n\n    indented code\n\n    more code\n\nText again.\n',
  'a table and a quote': '| a | b |\n|---|---|\n| 1 | 2 |\n\n> quoted\n\nend\n',
};

describe('markdown rendered in pieces as it streams', () => {
  for (const [name, text] of Object.entries(SAMPLES)) {
    it(`renders ${name} as the whole text does`, () => {
      for (const step of [1, 7, 40]) assert.equal(inPieces(text, step), renderMarkdown(text), `step ${step}`);
    });
  }

  it('never cuts before the last line, which may still grow', () => {
    assert.equal(stableCut('Done.\n\nNext para', 0), 0);
  });

  it('cuts before a paragraph that follows a blank line', () => {
    assert.equal(stableCut('Done.\n\nNext para\n', 0), 'Done.\n\n'.length);
  });
});
