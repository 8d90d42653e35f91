// A tool call as a compact row: status, name, the argument that says what it does (file,
// command, pattern, ...). An edit's files follow the row, each with its +N −M, "Open diff"
// and the diff; the rest of the input and the result open on click. An Agent/Task call
// holds its sub-agent's output, indented under it.

import type { Entry, ToolEntry } from '../core/transcript';
import { attempt, fileUpdatesOf, type ViewContext } from './context';
import { diffStats, diffView, statsLabel, type DiffStats } from './diff-view';
import { button, h, relativePath, shortPath } from './dom';
import type { EntryView } from './entry-view';
import { MarkdownView } from './markdown';
import { blockKey } from './view-state';

const EDIT_TOOLS = new Set(['Write', 'Edit', 'MultiEdit', 'NotebookEdit']);
const AGENT_TOOLS = new Set(['Agent', 'Task']);

const STATUS: Record<ToolEntry['status'], { icon: string; label: string }> = {
  pending: { icon: '○', label: 'being written' },
  awaitingPermission: { icon: '?', label: 'waiting for your permission' },
  running: { icon: '◌', label: 'running' },
  done: { icon: '✓', label: 'done' },
  failed: { icon: '✕', label: 'failed' },
  denied: { icon: '⊘', label: 'denied' },
  interrupted: { icon: '■', label: 'interrupted' },
};

/** The badge of a permission decision worth showing on the row (a pending one has its card). */
function decisionBadge(permission: ToolEntry['permission']): HTMLElement | null {
  if (!permission) return null;
  if (permission.byRule) return h('span', { class: 'badge', text: 'auto-allowed' });
  switch (permission.decision) {
    case 'allowed':
      return h('span', { class: 'badge allowed', text: 'allowed' });
    case 'denied':
      return h('span', { class: 'badge denied', text: 'denied' });
    case 'cancelled':
      return h('span', { class: 'badge', text: 'not answered' });
    default:
      return null;
  }
}

/** Lines of a result shown before "Show all". */
const RESULT_LINES = 12;

function s(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** The name shown for a tool: MCP tools as "server · tool". */
export function toolLabel(name: string): string {
  const mcp = /^mcp__(.+?)__(.+)$/.exec(name);
  return mcp ? `${mcp[1]} · ${mcp[2]}` : name;
}

/** The one argument that says what the call does. */
export function keyArgument(entry: Pick<ToolEntry, 'name' | 'input' | 'partialInput'>, cwd: string | null): string {
  const input = entry.input ?? {};
  const path = s(input.file_path) || s(input.notebook_path) || s(input.path);
  switch (entry.name) {
    case 'Bash':
      return s(input.command).split('\n')[0] ?? '';
    case 'Grep':
    case 'Glob':
      return [s(input.pattern), path && relativePath(path, cwd)].filter(Boolean).join('  in ');
    case 'WebFetch':
      return s(input.url);
    case 'WebSearch':
      return s(input.query);
    case 'Agent':
    case 'Task':
      return s(input.description);
    case 'TodoWrite':
      return Array.isArray(input.todos) ? `${input.todos.length} to-dos` : '';
    case 'AskUserQuestion': {
      const first = Array.isArray(input.questions)
        ? (input.questions[0] as Record<string, unknown> | undefined)
        : undefined;
      return s(first?.question);
    }
    case 'ExitPlanMode':
      return 'plan ready for review';
  }
  if (path) return shortPath(relativePath(path, cwd));
  const firstString = Object.values(input).find((v): v is string => typeof v === 'string');
  return (firstString ?? '').split('\n')[0] ?? '';
}

function preBlock(text: string, className: string): HTMLElement {
  const lines = text.split('\n');
  const pre = h('pre', { class: className, text: lines.slice(0, RESULT_LINES).join('\n') });
  if (lines.length <= RESULT_LINES) return pre;
  const wrap = h('div', {}, pre);
  const more = button(
    `Show all ${lines.length} lines`,
    () => {
      pre.textContent = text;
      more.remove();
    },
    { class: 'link-button show-all' },
  );
  wrap.append(more);
  return wrap;
}

function todoList(input: Record<string, unknown>): HTMLElement {
  const list = h('ul', { class: 'todos' });
  for (const raw of Array.isArray(input.todos) ? input.todos : []) {
    const todo = raw as Record<string, unknown>;
    const status = s(todo.status);
    const mark = status === 'completed' ? '☑' : status === 'in_progress' ? '◐' : '☐';
    list.append(
      h('li', { class: `todo ${status}` }, h('span', { class: 'todo-mark', text: mark }), ` ${s(todo.content)}`),
    );
  }
  return list;
}

export class ToolView implements EntryView {
  readonly el: HTMLElement;
  /** Where the sub-agent's entries go (Agent/Task calls only). */
  readonly children: HTMLElement | null;
  private readonly header: HTMLButtonElement;
  private readonly files: HTMLElement;
  private readonly body: HTMLElement;
  private entry: ToolEntry;
  private shownFiles = '';

  constructor(
    entry: ToolEntry,
    private readonly ctx: ViewContext,
  ) {
    this.entry = entry;
    this.header = h('button', { class: 'tool-head', attrs: { type: 'button' } });
    this.header.addEventListener('click', () => this.toggle());
    this.files = h('div', { class: 'tool-files' });
    this.body = h('div', { class: 'tool-body' });
    this.children = AGENT_TOOLS.has(entry.name)
      ? h('div', { class: 'sub-agent', attrs: { 'aria-label': 'sub-agent output' } })
      : null;
    this.el = h('div', { class: 'entry tool' }, this.header, this.files, this.body, this.children ?? null);
    this.update(entry);
  }

  private get key(): string {
    return blockKey('tool', this.entry.id);
  }

  private get expanded(): boolean {
    return this.ctx.view.isExpanded(this.key, false);
  }

  private toggle(): void {
    this.ctx.view.setExpanded(this.key, !this.expanded);
    this.renderBody();
  }

  update(entry: Entry): void {
    if (entry.kind !== 'tool') return;
    this.entry = entry;
    const cwd = this.ctx.state().folder;
    const status = STATUS[entry.status];
    const arg = entry.input ? keyArgument(entry, cwd) : entry.partialInput ? '…' : '';
    this.el.dataset.status = entry.status;
    this.header.replaceChildren(
      ...[
        h('span', {
          class: 'tool-status',
          text: status.icon,
          attrs: { 'aria-label': status.label },
          title: status.label,
        }),
        h('span', { class: 'tool-name', text: toolLabel(entry.name) }),
        h('span', { class: 'tool-arg', text: arg, title: arg }),
        entry.status === 'denied' && entry.permission?.decision !== 'denied'
          ? h('span', { class: 'badge denied', text: 'denied' })
          : decisionBadge(entry.permission),
        h('span', { class: 'chevron', attrs: { 'aria-hidden': 'true' } }),
      ].filter((part) => part !== null),
    );
    this.header.setAttribute('aria-expanded', String(this.expanded));
    this.renderFiles();
    this.renderBody();
  }

  /** The files the call changed, each on its row with its +N -M (once: the row is where the
   * diff opens): with its diff (claude/fileUpdated) when there is one; else, after a reload,
   * with the diff the page saved (the file opens, as the before/after is gone with the old
   * window); else its path and counts from the entry (a resumed chat's daemon has no diffs). */
  private renderFiles(): void {
    const updates = fileUpdatesOf(this.ctx, this.entry.id);
    const saved = this.ctx.view.diffsOf(this.entry.id).filter((d) => !updates.some((u) => u.path === d.path));
    const counts = this.entry.files ?? [];
    const counted = counts.filter(
      (f) => !updates.some((u) => u.path === f.path) && !saved.some((d) => d.path === f.path),
    );
    const key = JSON.stringify([updates.map((u) => u.seq), saved.map((d) => d.path), counts]);
    if (key === this.shownFiles) return;
    this.shownFiles = key;
    const cwd = this.ctx.state().folder;
    const head = (path: string, stats: DiffStats | null, ...rest: HTMLElement[]) =>
      h(
        'div',
        { class: 'file-head' },
        h('span', { class: 'file-path', text: shortPath(relativePath(path, cwd)), title: path }),
        stats && statsLabel(stats),
        ...rest,
      );
    this.files.replaceChildren(
      ...updates.map((f) =>
        h(
          'div',
          { class: 'file-update' },
          head(
            f.path,
            counts.find((c) => c.path === f.path) ?? (f.diff !== null ? diffStats(f.diff) : null),
            button(
              'Open diff',
              () => void attempt(this.ctx, 'Open diff', () => this.ctx.request('openFileDiff', { seq: f.seq })),
              { class: 'link-button' },
            ),
          ),
          f.diff !== null ? diffView(f.diff) : h('div', { class: 'note', text: f.notice ?? '' }),
        ),
      ),
      ...saved.map((d) =>
        h(
          'div',
          { class: 'file-update' },
          head(
            d.path,
            counts.find((c) => c.path === d.path) ?? diffStats(d.diff),
            button(
              'Open file',
              () => void attempt(this.ctx, 'Open file', () => this.ctx.request('openFile', { path: d.path })),
              {
                class: 'link-button',
                title: 'The before and after went with the window reload: the file as it is now',
              },
            ),
          ),
          diffView(d.diff),
        ),
      ),
      ...counted.map((f) => h('div', { class: 'file-update' }, head(f.path, f))),
    );
  }

  private renderBody(): void {
    this.header.setAttribute('aria-expanded', String(this.expanded));
    this.el.classList.toggle('expanded', this.expanded);
    if (!this.expanded) {
      this.body.replaceChildren();
      return;
    }
    const { entry } = this;
    const input = entry.input ?? {};
    const parts: (HTMLElement | null)[] = [];
    if (entry.name === 'Bash') {
      parts.push(preBlock(`$ ${s(input.command)}`, 'tool-input'));
    } else if (entry.name === 'TodoWrite') {
      parts.push(todoList(input));
    } else if (entry.name === 'ExitPlanMode') {
      const plan = new MarkdownView('plan');
      plan.set(s(input.plan), false);
      parts.push(plan.el);
    } else if (EDIT_TOOLS.has(entry.name) && entry.permission?.preview && !entry.files?.length) {
      parts.push(h('div', { class: 'label', text: 'Proposed change' }), diffView(entry.permission.preview));
    } else if (!AGENT_TOOLS.has(entry.name) || !entry.input) {
      parts.push(preBlock(entry.input ? JSON.stringify(input, null, 2) : (entry.partialInput ?? ''), 'tool-input'));
    } else {
      parts.push(preBlock(s(input.prompt), 'tool-input'));
    }
    if (entry.permission?.decisionReason)
      parts.push(h('div', { class: 'note', text: entry.permission.decisionReason }));
    if (entry.result) {
      parts.push(
        h('div', {
          class: 'label',
          text: entry.status === 'denied' ? 'Denied' : entry.result.isError ? 'Error' : 'Result',
        }),
      );
      const images = entry.result.imageCount ?? 0;
      const text = entry.result.text + (images ? `\n[${images} image(s)]` : '');
      parts.push(preBlock(text || '(no output)', `tool-result${entry.result.isError ? ' error' : ''}`));
    }
    this.body.replaceChildren(...parts.filter((p) => p !== null));
  }
}
