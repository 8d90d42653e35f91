// One view per kind of transcript entry (tool calls are in tool-view.ts). Each view keeps
// its element and updates it in place when its entry changes.

import type { Entry, FileEntry, NoticeEntry, TextEntry, ThinkingEntry, TurnEntry, UserEntry } from '../core/transcript';
import { attempt, fileUpdate, type ViewContext } from './context';
import { diffView } from './diff-view';
import { button, formatCost, formatDuration, h, iconButton, relativePath, shortPath } from './dom';
import type { EntryView } from './entry-view';
import { MarkdownView } from './markdown';
import { ToolView } from './tool-view';
import { blockKey } from './view-state';

class UserView implements EntryView {
  readonly el: HTMLElement;

  constructor(entry: UserEntry, ctx: ViewContext, queued: boolean) {
    const { messageId } = entry;
    const actions =
      messageId && !queued
        ? h(
            'div',
            { class: 'message-actions' },
            iconButton(
              '⑂',
              'Fork the conversation from here',
              () => void attempt(ctx, 'Fork', () => ctx.request('fork', { messageId })),
            ),
            iconButton('↺', 'Rewind files to before this message', () => ctx.rewind(messageId)),
          )
        : null;
    this.el = h(
      'div',
      { class: `entry user${queued ? ' queued' : ''}` },
      h(
        'div',
        { class: 'bubble' },
        h('div', { class: 'user-text', text: entry.text }),
        entry.images
          ? h('div', { class: 'note', text: `🖼 ${entry.images} image${entry.images > 1 ? 's' : ''}` })
          : null,
        queued ? h('div', { class: 'note', text: 'Queued: sent when Claude is ready' }) : null,
      ),
      actions,
    );
  }

  update(): void {}
}

class TextView implements EntryView {
  readonly el: HTMLElement;
  private readonly markdown = new MarkdownView('answer');
  private readonly aborted = h('div', { class: 'note', text: 'Interrupted' });

  constructor(entry: TextEntry) {
    this.el = h('div', { class: 'entry text' }, this.markdown.el);
    this.update(entry);
  }

  update(entry: Entry): void {
    if (entry.kind !== 'text') return;
    this.markdown.set(entry.text, entry.streaming);
    this.el.classList.toggle('streaming', entry.streaming);
    if (entry.aborted) this.el.append(this.aborted);
  }
}

class ThinkingView implements EntryView {
  readonly el: HTMLDetailsElement;
  private readonly summary = h('summary', {});
  private readonly body = h('div', { class: 'thinking-text' });
  private streaming = false;

  constructor(
    private entry: ThinkingEntry,
    private readonly ctx: ViewContext,
  ) {
    this.el = h('details', { class: 'entry thinking' }, this.summary, this.body);
    // Only a click of the user's is remembered, not the opening while it streams.
    this.summary.addEventListener('click', () => ctx.view.setExpanded(this.key, !this.el.open));
    this.update(entry);
  }

  private get key(): string {
    return blockKey('thinking', this.entry.id);
  }

  update(entry: Entry): void {
    if (entry.kind !== 'thinking') return;
    this.entry = entry;
    this.body.textContent = entry.text;
    this.summary.textContent = entry.streaming ? 'Thinking…' : 'Thought';
    if (entry.streaming !== this.streaming || !this.el.dataset.ready) {
      this.streaming = entry.streaming;
      this.el.dataset.ready = '1';
      this.el.open = this.ctx.view.isExpanded(this.key, entry.streaming);
    }
    this.el.classList.toggle('streaming', entry.streaming);
  }
}

const OUTCOMES: Record<TurnEntry['outcome'], string> = {
  success: 'Done',
  interrupted: 'Interrupted',
  error: 'Failed',
  maxTurns: 'Stopped: turn limit reached',
  maxBudget: 'Stopped: budget reached',
};

class TurnView implements EntryView {
  readonly el: HTMLElement;

  constructor(entry: TurnEntry) {
    const waited = entry.permissionWaitMs >= 1000 ? ` (${formatDuration(entry.permissionWaitMs)} waiting for you)` : '';
    const facts = [OUTCOMES[entry.outcome], `${formatDuration(entry.durationMs)}${waited}`, formatCost(entry.costUsd)];
    this.el = h(
      'div',
      { class: `entry turn ${entry.outcome}`, attrs: { role: 'note' } },
      h('div', { class: 'turn-facts', text: facts.join(' · ') }),
      entry.error ? h('div', { class: 'turn-error', text: entry.error }) : null,
    );
  }

  update(): void {}
}

class NoticeView implements EntryView {
  readonly el: HTMLElement;

  constructor(entry: NoticeEntry) {
    this.el = h('div', {
      class: `entry notice ${entry.level}`,
      text: entry.text,
      attrs: { role: entry.level === 'error' ? 'alert' : 'status' },
    });
  }

  update(): void {}
}

/** A file a rewind restored. */
class FileView implements EntryView {
  readonly el: HTMLElement;

  constructor(entry: FileEntry, ctx: ViewContext) {
    const update = fileUpdate(ctx, entry.seq);
    const path = update ? shortPath(relativePath(update.path, ctx.state().cwd)) : '';
    this.el = h(
      'div',
      { class: 'entry file-update' },
      h(
        'div',
        { class: 'file-head' },
        h('span', { class: 'file-path', text: `Restored ${path}`, title: update?.path ?? '' }),
        button(
          'Open diff',
          () => void attempt(ctx, 'Open diff', () => ctx.request('openFileDiff', { seq: entry.seq })),
          { class: 'link-button' },
        ),
      ),
      update?.diff ? diffView(update.diff) : h('div', { class: 'note', text: update?.notice ?? '' }),
    );
  }

  update(): void {}
}

export function entryView(entry: Entry, ctx: ViewContext, queued = false): EntryView {
  switch (entry.kind) {
    case 'user':
      return new UserView(entry, ctx, queued);
    case 'text':
      return new TextView(entry);
    case 'thinking':
      return new ThinkingView(entry, ctx);
    case 'tool':
      return new ToolView(entry, ctx);
    case 'turn':
      return new TurnView(entry);
    case 'notice':
      return new NoticeView(entry);
    case 'file':
      return new FileView(entry, ctx);
  }
}
