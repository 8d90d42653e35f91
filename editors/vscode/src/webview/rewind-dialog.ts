// "Rewind files to here": a dry run first, its diffs shown in a dialog inside the page,
// and only on confirmation the real rewind. The conversation itself is not rewound (the
// CLI keeps it), which the dialog says.

import type { RewindFilesResult } from '../core/protocol.generated';
import type { ViewContext } from './context';
import { diffView } from './diff-view';
import { button, h, relativePath, shortPath } from './dom';

export async function rewindFiles(ctx: ViewContext, messageId: string): Promise<void> {
  let preview: RewindFilesResult;
  try {
    preview = await ctx.request('rewind', { messageId, dryRun: true });
  } catch (e) {
    ctx.toast(`Cannot rewind: ${(e as Error).message}`, 'error');
    return;
  }
  const cwd = ctx.state().folder;
  const opener = document.activeElement as HTMLElement | null;
  const close = () => {
    overlay.remove();
    opener?.focus();
  };
  const files = preview.diffs.map((d) =>
    h(
      'div',
      { class: 'file-update' },
      h(
        'div',
        { class: 'file-head' },
        h('span', { class: 'file-path', text: shortPath(relativePath(d.path, cwd)), title: d.path }),
      ),
      d.diff !== null ? diffView(d.diff, 8) : h('div', { class: 'note', text: d.note ?? '' }),
    ),
  );
  const nothing = !preview.filesChanged.length;
  const rewind = async () => {
    confirm.disabled = true;
    try {
      const done = await ctx.request('rewind', { messageId, dryRun: false });
      ctx.toast(`Rewound ${done.filesChanged.length} file${done.filesChanged.length === 1 ? '' : 's'}.`);
      close();
    } catch (e) {
      confirm.disabled = false;
      error.textContent = (e as Error).message;
    }
  };
  const confirm = button('Rewind files', () => void rewind(), { class: 'primary' });
  confirm.hidden = nothing;
  const error = h('div', { class: 'card-error', attrs: { role: 'alert' } });
  const dialog = h(
    'div',
    { class: 'dialog', attrs: { role: 'dialog', 'aria-modal': 'true', 'aria-labelledby': 'rewind-title' } },
    h('h2', { text: 'Rewind files to before this message?', attrs: { id: 'rewind-title' } }),
    h('p', {
      class: 'note',
      text: nothing
        ? 'The files are already as they were then: nothing to rewind.'
        : `${preview.filesChanged.length} file${preview.filesChanged.length === 1 ? '' : 's'} change (+${preview.insertions} −${preview.deletions}). The conversation stays as it is; edits made by Bash or outside Claude are not undone.`,
    }),
    h('div', { class: 'dialog-files' }, ...files),
    error,
    h('div', { class: 'card-actions' }, confirm, button(nothing ? 'Close' : 'Cancel', close)),
  );
  const overlay = h('div', { class: 'overlay' }, dialog);
  overlay.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') close();
  });
  overlay.addEventListener('click', (e) => {
    if (e.target === overlay) close();
  });
  document.body.append(overlay);
  (nothing ? dialog.querySelector('button') : confirm)?.focus();
}
