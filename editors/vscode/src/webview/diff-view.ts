// A unified diff (the daemon's `preview` and `diff` format: absolute paths in the headers,
// 3 lines of context) as coloured lines with line numbers. Long diffs show their first
// lines and a "Show all" button: a 5,000-line rewrite must not bury the chat.

import { button, h } from './dom';

export interface DiffStats {
  added: number;
  removed: number;
}

export function diffStats(diff: string): DiffStats {
  let added = 0;
  let removed = 0;
  for (const line of diff.split('\n')) {
    if (line.startsWith('+') && !line.startsWith('+++')) added++;
    else if (line.startsWith('-') && !line.startsWith('---')) removed++;
  }
  return { added, removed };
}

export function statsLabel({ added, removed }: DiffStats): HTMLElement {
  return h(
    'span',
    { class: 'diff-stats' },
    h('span', { class: 'added', text: `+${added}` }),
    ' ',
    h('span', { class: 'removed', text: `−${removed}` }),
  );
}

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;

/** The diff's lines as rows: [old number, new number, kind, text]. */
function rows(diff: string): [string, string, string, string][] {
  const out: [string, string, string, string][] = [];
  let oldLine = 0;
  let newLine = 0;
  for (const line of diff.split('\n')) {
    if (line.startsWith('--- ') || line.startsWith('+++ ') || line === '') continue;
    const hunk = HUNK.exec(line);
    if (hunk) {
      oldLine = Number(hunk[1]);
      newLine = Number(hunk[2]);
      if (out.length) out.push(['', '', 'hunk', '⋯']);
    } else if (line.startsWith('+')) {
      out.push(['', String(newLine++), 'add', line.slice(1)]);
    } else if (line.startsWith('-')) {
      out.push([String(oldLine++), '', 'del', line.slice(1)]);
    } else if (line.startsWith('\\')) {
      out.push(['', '', 'note', line.slice(2)]);
    } else {
      out.push([String(oldLine++), String(newLine++), 'ctx', line.slice(1)]);
    }
  }
  return out;
}

/** The diff as a table of lines; `visible` lines at first, the rest behind "Show all". */
export function diffView(diff: string, visible = 12): HTMLElement {
  const all = rows(diff);
  const table = h('div', { class: 'diff', attrs: { role: 'table', 'aria-label': 'diff' } });
  const append = (from: number, to: number) => {
    for (const [oldNo, newNo, kind, text] of all.slice(from, to)) {
      const sign = kind === 'add' ? '+' : kind === 'del' ? '−' : '';
      table.append(
        h(
          'div',
          { class: `diff-line ${kind}`, attrs: { role: 'row' } },
          h('span', { class: 'ln', text: oldNo }),
          h('span', { class: 'ln', text: newNo }),
          h('span', { class: 'sign', text: sign }),
          h('span', { class: 'code', text: text || ' ' }),
        ),
      );
    }
  };
  if (!all.length) {
    table.append(h('div', { class: 'diff-line note', text: 'No changes.' }));
    return table;
  }
  append(0, visible);
  if (all.length > visible) {
    const more = button(
      `Show all ${all.length} lines`,
      () => {
        more.remove();
        append(visible, all.length);
      },
      { class: 'link-button show-all' },
    );
    table.append(more);
  }
  return table;
}
