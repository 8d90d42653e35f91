// One view per kind of transcript entry (tool calls are in tool-view.ts). Each view keeps
// its element and updates it in place when its entry changes.

import {
  isWaitingPrompt,
  type Entry,
  type NoticeEntry,
  type PromptEntry,
  type RestoredFileEntry,
  type TextEntry,
  type ThinkingEntry,
  type TurnEntry,
} from '../core/transcript';
import { attempt, fileUpdate, type ViewContext } from './context';
import { diffView } from './diff-view';
import { button, formatCost, formatDuration, h, iconButton, relativePath, shortPath } from './dom';
import type { EntryView } from './entry-view';
import { MarkdownView, SLICE_CHARS } from './markdown';
import { ToolView } from './tool-view';
import { blockKey } from './view-state';

/** A prompt: the user's (fork and rewind start here), or the one a sub-agent was given. */
class PromptView implements EntryView {
  readonly el: HTMLElement;

  constructor(entry: PromptEntry, ctx: ViewContext) {
    const messageId = entry.id;
    const actions =
      !entry.queued && !entry.parentId
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
    const images = entry.imageCount ?? 0;
    this.el = h(
      'div',
      { class: `entry user${entry.queued ? ' queued' : ''}${entry.parentId ? ' sub-agent-prompt' : ''}` },
      h(
        'div',
        { class: 'bubble' },
        entry.parentId ? h('div', { class: 'label', text: 'Task given to the agent' }) : null,
        h('div', { class: 'user-text', text: entry.text }),
        images ? h('div', { class: 'note', text: `🖼 ${images} image${images > 1 ? 's' : ''}` }) : null,
        entry.queued
          ? h('div', {
              class: 'note',
              text: isWaitingPrompt(entry)
                ? 'Waiting: sent once Claude has started'
                : 'Queued: sent when Claude is ready',
            })
          : null,
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
  /** The entry as last given (what a slice drawn later draws from). */
  private entry: TextEntry;
  /** The rest of the text is to be drawn in the next frame. */
  private unfinished = false;
  /** The view showed the answer streaming: the user follows its end, drawn first when much comes at once. */
  private streamed = false;

  constructor(
    entry: TextEntry,
    private readonly ctx: ViewContext,
  ) {
    this.entry = entry;
    this.el = h('div', { class: 'entry text' }, this.markdown.el);
    this.update(entry);
  }

  update(entry: Entry): void {
    if (entry.kind !== 'text') return;
    this.entry = entry;
    const streaming = entry.streaming === true;
    this.streamed ||= streaming;
    // A long text (a chat opened with long answers, or a page that fell behind) a slice a
    // frame, so that no frame takes long and the keys typed meanwhile are drawn; the end of
    // an answer that streams first (a turn's end that comes with a backlog is seen at once).
    const whole = this.markdown.set(entry.text, streaming, SLICE_CHARS, this.streamed);
    if (!whole && !this.unfinished) {
      this.unfinished = true;
      this.ctx.nextFrame(() => {
        this.unfinished = false;
        // A view the transcript dropped meanwhile (drawn anew) draws nothing more.
        if (this.el.isConnected) this.update(this.entry);
      });
    }
    this.el.classList.toggle('streaming', streaming);
    if (entry.aborted) this.el.append(this.aborted);
    else this.aborted.remove();
  }
}

class ThinkingView implements EntryView {
  readonly el: HTMLDetailsElement;
  private readonly summary = h('summary', {});
  private readonly body = h('div', { class: 'thinking-text' });
  private shownText = '';
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
    const streaming = entry.streaming === true;
    // Streamed thinking only grows: append what is new, not the whole text again.
    if (entry.text.startsWith(this.shownText)) this.body.append(entry.text.slice(this.shownText.length));
    else this.body.textContent = entry.text;
    this.shownText = entry.text;
    this.summary.textContent = streaming ? 'Thinking…' : 'Thought';
    if (streaming !== this.streaming || !this.el.dataset.ready) {
      this.streaming = streaming;
      this.el.dataset.ready = '1';
      this.el.open = this.ctx.view.isExpanded(this.key, streaming);
    }
    this.el.classList.toggle('streaming', streaming);
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

/** How a notice of each known subtype reads; any other shows its own text. */
const NOTICE_TITLES: Record<string, string> = {
  compaction: 'Conversation compacted',
  cleared: 'Conversation cleared',
  interrupted: 'Interrupted by you',
};

/** Something the CLI (or this client) reported in the conversation, by its subtype and level. */
class NoticeView implements EntryView {
  readonly el: HTMLElement;

  constructor(entry: NoticeEntry) {
    const title = NOTICE_TITLES[entry.subtype];
    const text =
      entry.subtype === 'commandOutput'
        ? h('pre', { class: 'command-output', text: entry.text })
        : entry.subtype === 'compactSummary'
          ? h(
              'details',
              {},
              h('summary', { text: 'Summary of the earlier conversation' }),
              h('div', { class: 'notice-text', text: entry.text }),
            )
          : h('div', { class: 'notice-text', text: title ?? entry.text, title: title ? entry.text : '' });
    this.el = h(
      'div',
      {
        class: `entry notice ${entry.level} ${entry.subtype}`,
        attrs: { role: entry.level === 'error' ? 'alert' : 'status', 'data-subtype': entry.subtype },
      },
      text,
    );
  }

  update(): void {}
}

/** A file a rewind restored. */
class RestoredFileView implements EntryView {
  readonly el: HTMLElement;

  constructor(entry: RestoredFileEntry, ctx: ViewContext) {
    const update = fileUpdate(ctx, entry.seq);
    const path = update ? shortPath(relativePath(update.path, ctx.state().folder)) : '';
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

/** The view of one entry, made once; it updates itself when the entry changes. */
export function entryView(entry: Entry, ctx: ViewContext): EntryView {
  switch (entry.kind) {
    case 'prompt':
      return new PromptView(entry, ctx);
    case 'text':
      return new TextView(entry, ctx);
    case 'thinking':
      return new ThinkingView(entry, ctx);
    case 'tool':
      return new ToolView(entry, ctx);
    case 'turn':
      return new TurnView(entry);
    case 'notice':
      return new NoticeView(entry);
    case 'restoredFile':
      return new RestoredFileView(entry, ctx);
  }
}
