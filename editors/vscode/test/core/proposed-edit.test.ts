// What a pending edit tool would leave in its file, for the native diff editor's review.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { editedPath, proposedContent } from '../../src/core/proposed-edit';

describe('a proposed edit', () => {
  test('of Write is the content it writes, whatever the file holds', () => {
    assert.equal(proposedContent('Write', { file_path: '/w/a.txt', content: 'new\n' }, 'old\n'), 'new\n');
    assert.equal(proposedContent('Write', { file_path: '/w/a.txt', content: 'new\n' }, null), 'new\n');
  });

  test('of Edit replaces the first occurrence, or all with replace_all', () => {
    const input = { file_path: '/w/a.py', old_string: 'x', new_string: 'y' };
    assert.equal(proposedContent('Edit', input, 'x x\n'), 'y x\n');
    assert.equal(proposedContent('Edit', { ...input, replace_all: true }, 'x x\n'), 'y y\n');
  });

  test('of Edit keeps $ patterns in the new text literally', () => {
    const input = { file_path: '/w/a.js', old_string: 'price', new_string: "'$&' + $1" };
    assert.equal(proposedContent('Edit', input, 'price\n'), "'$&' + $1\n");
  });

  test('of MultiEdit applies its edits in order', () => {
    const input = {
      file_path: '/w/a.py',
      edits: [
        { old_string: 'a', new_string: 'b' },
        { old_string: 'b', new_string: 'c', replace_all: true },
      ],
    };
    assert.equal(proposedContent('MultiEdit', input, 'a b\n'), 'c c\n');
  });

  test('that cannot apply says why (the tool would fail too)', () => {
    assert.throws(
      () => proposedContent('Edit', { file_path: '/w/a.py', old_string: 'missing', new_string: 'y' }, 'x\n'),
      /old_string is not in the file/,
    );
    assert.throws(() => proposedContent('Bash', { command: 'ls' }, null), /not an edit tool/);
  });

  test('names the file only for edit tools', () => {
    assert.equal(editedPath('Edit', { file_path: '/w/a.py' }), '/w/a.py');
    assert.equal(editedPath('Bash', { command: 'ls' }), undefined);
  });
});
