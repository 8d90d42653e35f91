// The chat's controls: a bar above the transcript (context meter, cost, sessions, new
// chat) and, under the prompt where the eye already is, the permission mode and model
// (and effort) pickers.

import type { ChannelInfo, ContextReading, ModelInfo } from '../core/protocol.generated';
import type { ChatState } from '../core/chat-state';
import { attempt, type ViewContext } from './context';
import { formatCost, h, iconButton, setHidden, setText } from './dom';

const MODES: { value: string; label: string }[] = [
  { value: 'default', label: 'Ask before edits' },
  { value: 'acceptEdits', label: 'Edit automatically' },
  { value: 'plan', label: 'Plan mode' },
  { value: 'bypassPermissions', label: 'Bypass permissions' },
];

function select(label: string, onChange: (value: string) => void): HTMLSelectElement {
  const el = h('select', { class: 'picker', title: label, attrs: { 'aria-label': label } });
  el.addEventListener('change', () => onChange(el.value));
  return el;
}

function setOptions(
  el: HTMLSelectElement,
  options: { value: string; label: string; title?: string }[],
  current: string,
): void {
  el.replaceChildren(
    ...options.map((o) => {
      const option = h('option', { text: o.label, title: o.title ?? '' });
      option.value = o.value;
      return option;
    }),
  );
  el.value = current;
}

/** The conversation has more than prompts: answers (or notices) came before. */
function answered(state: ChatState): boolean {
  return state.entries.some((e) => e.kind !== 'prompt');
}

export class Header {
  readonly el: HTMLElement;
  /** The pickers, placed under the prompt. */
  readonly pickers: HTMLElement;
  /** The user opted in to bypassPermissions: the mode picker offers it. */
  allowBypassPermissions = false;
  private readonly model = select('Model', (value) => this.chooseModel(value));
  private readonly effort = select('Effort', (value) => this.chooseModel(this.model.value, value));
  private readonly mode = select('Permission mode', (value) => {
    void attempt(this.ctx, 'Permission mode', () => this.ctx.request('setPermissionMode', { mode: value }));
  });
  private readonly meterBar = h('span', { class: 'meter-fill' });
  private readonly meter = h(
    'span',
    {
      class: 'meter',
      attrs: { role: 'meter', 'aria-label': 'Context used', 'aria-valuemin': '0', 'aria-valuemax': '100' },
    },
    h('span', { class: 'meter-track' }, this.meterBar),
  );
  private readonly meterText = h('span', { class: 'meter-text' });
  private readonly cost = h('span', { class: 'cost', title: 'What this chat has cost so far' });
  /** A chat in a git worktree says so: its branch (the path in the tooltip). */
  private readonly branch = h('span', { class: 'header-branch' });
  private shown = '';
  /** The context reading the meter shows (undefined: none drawn yet). */
  private context: ContextReading | null | undefined;
  /** The CLI lists models to pick from. */
  private modelsOffered = false;

  constructor(private readonly ctx: ViewContext) {
    this.pickers = h('div', { class: 'pickers' }, this.mode, this.model, this.effort);
    this.el = h(
      'header',
      { class: 'header' },
      h('div', { class: 'header-title' }, h('span', { text: 'Claude' }), this.branch),
      h('div', { class: 'header-facts' }, this.meter, this.meterText, this.cost),
      h(
        'div',
        { class: 'header-actions' },
        iconButton(
          '☰',
          'Sessions: resume an earlier chat',
          () => void attempt(ctx, 'Sessions', () => ctx.request('showSessions', {})),
        ),
        iconButton('+', 'New chat', () => void attempt(ctx, 'New chat', () => ctx.request('newChat', {}))),
      ),
    );
    this.setContext(null);
    // The number format's first use loads the locale's number data, ~30 ms of the thread: while
    // the page is idle, not in the frame that draws the first turn's end.
    requestIdleCallback(() => tokenCount(0));
  }

  private currentModel(info: ChannelInfo | null, state: ChatState): ModelInfo | undefined {
    const models = info?.models ?? [];
    const active = state.status.model ?? info?.model;
    // Nothing chosen nor reported yet: a new chat runs the CLI's default (its first prompt may
    // show before the CLI names the model); a resumed one, which has answers, the session's
    // model, which the CLI names with its next answer.
    if (!active) return answered(state) ? undefined : models.find((m) => m.value === 'default');
    return (
      models.find((m) => m.value === info?.model) ??
      models.find((m) => m.resolvedModel === active || m.value === active)
    );
  }

  update(state: ChatState, info: ChannelInfo | null): void {
    const mode = state.status.permissionMode ?? info?.permissionMode ?? 'default';
    const key = JSON.stringify([
      info?.models.map((m) => m.value),
      info?.model,
      info?.effort,
      state.status.model,
      answered(state),
      mode,
      this.allowBypassPermissions,
    ]);
    if (key !== this.shown) {
      this.shown = key;
      const current = this.currentModel(info, state);
      const models = info?.models ?? [];
      const options = models.map((m) => ({ value: m.value, label: m.displayName, title: m.description ?? '' }));
      // A model the CLI does not list (a resumed session's, a full model id) is still shown as the one in use.
      const active = state.status.model ?? info?.model ?? '';
      if (!current && active) options.unshift({ value: active, label: active, title: 'The model this chat uses' });
      else if (!current && options.length) {
        options.unshift({ value: '', label: "The session's model", title: 'Named by Claude with its next answer' });
      }
      setOptions(this.model, options.length ? options : [{ value: '', label: 'Model' }], current?.value ?? active);
      this.modelsOffered = options.length > 0;
      this.model.disabled = !this.modelsOffered || this.model.getAttribute('aria-busy') === 'true';
      const levels = current?.supportedEffortLevels ?? [];
      setHidden(this.effort, !levels.length);
      setOptions(
        this.effort,
        [{ value: '', label: 'Default effort' }, ...levels.map((l) => ({ value: l, label: `${l} effort` }))],
        info?.effort ?? '',
      );
      // Bypassing every permission needs the user's opt-in (a setting); offered only where it is on.
      const modes = MODES.filter(
        (m) => m.value !== 'bypassPermissions' || this.allowBypassPermissions || mode === 'bypassPermissions',
      );
      setOptions(this.mode, modes, mode);
    }
    setText(this.cost, state.totals.costUsd ? formatCost(state.totals.costUsd) : '');
    this.showWorktree(info);
    if (state.totals.context !== this.context) this.setContext(state.totals.context);
  }

  /** The worktree's branch beside the title (nothing for a chat in the folder itself). */
  private showWorktree(info: ChannelInfo | null): void {
    const worktree = info?.worktree;
    setText(this.branch, worktree ? `⎇ ${worktree.branch}` : '');
    const title = worktree
      ? `This chat works in its own git worktree, ${worktree.path}, on branch ${worktree.branch}` +
        (worktree.baseBranch ? ` (from ${worktree.baseBranch})` : '')
      : '';
    if (this.branch.title !== title) this.branch.title = title;
  }

  /** The context meter: the daemon's reading after the last turn (a resumed chat's from its
   * recorded turns), none before one. */
  private setContext(usage: ContextReading | null): void {
    this.context = usage;
    const percent = usage ? Math.min(100, Math.max(0, usage.percentage)) : 0;
    setHidden(this.meter, !usage);
    this.meterBar.style.width = `${percent}%`;
    this.meter.setAttribute('aria-valuenow', String(Math.round(percent)));
    this.meter.classList.toggle('high', percent >= 80);
    this.meterText.textContent = usage ? `${Math.round(percent)}% context` : '';
    this.meterText.title = usage ? `${tokenCount(usage.totalTokens)} of ${tokenCount(usage.maxTokens)} tokens` : '';
  }

  /** Asks for the model (and effort); the pickers wait for the answer (the host has the channel's
   * new info by then). */
  private chooseModel(model: string, effort?: string): void {
    const busy = (on: boolean) => {
      for (const picker of [this.model, this.effort]) picker.setAttribute('aria-busy', String(on));
      this.model.disabled = on || !this.modelsOffered;
      this.effort.disabled = on;
    };
    busy(true);
    void attempt(this.ctx, 'Model', () => this.ctx.request('setModel', effort ? { model, effort } : { model })).finally(
      () => busy(false),
    );
  }
}

let counts: Intl.NumberFormat | undefined;

/** A count of tokens as the user's locale writes numbers ("23,400"). */
function tokenCount(n: number): string {
  counts ??= new Intl.NumberFormat();
  return counts.format(n);
}
