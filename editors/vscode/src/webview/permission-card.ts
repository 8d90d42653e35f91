// The cards of pending permission requests, docked above the prompt: a tool use to allow
// or deny (with the proposed diff for edits), an AskUserQuestion to answer, a plan
// (ExitPlanMode) to approve. Answers go out as claude/respondPermission (see
// docs/protocol.md); a card stays until the request is no longer pending.

import type { PermissionRequestNotification } from '../core/protocol.generated';
import type { ChatState } from '../core/chat-state';
import type { WebviewOps } from '../shared/webview-messages';
import { errorText, type ViewContext } from './context';
import { diffView } from './diff-view';
import { button, h, relativePath, setHidden } from './dom';
import { MarkdownView } from './markdown';
import { keyArgument, toolLabel } from './tool-view';

type Answer = WebviewOps['respondPermission']['params'];

const EDIT_TOOLS = new Set(['Write', 'Edit', 'MultiEdit', 'NotebookEdit']);

interface Question {
  question: string;
  header?: string;
  multiSelect?: boolean;
  options: { label: string; description?: string }[];
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** What "always allow" would keep, in words, from the request's suggestions. */
export function describeSuggestions(suggestions: unknown[], cwd: string | null): string {
  const where: Record<string, string> = {
    session: 'for this session',
    localSettings: 'in this project',
    projectSettings: 'in this project (shared settings)',
    userSettings: 'everywhere',
  };
  const parts = suggestions.map((raw) => {
    const s = raw as Record<string, unknown>;
    const scope = where[str(s.destination)] ?? '';
    if (s.type === 'setMode' && s.mode === 'acceptEdits') return `Allow all edits ${scope}`;
    if (s.type === 'setMode') return `Switch to ${str(s.mode)} mode ${scope}`;
    if (s.type === 'addRules' && Array.isArray(s.rules)) {
      const rules = s.rules.map((r) => {
        const rule = r as Record<string, unknown>;
        return str(rule.ruleContent) ? `${str(rule.toolName)}(${str(rule.ruleContent)})` : str(rule.toolName);
      });
      return `Always allow ${rules.join(', ')} ${scope}`;
    }
    if (s.type === 'addDirectories' && Array.isArray(s.directories)) {
      return `Always allow access to ${s.directories.map((d) => relativePath(str(d), cwd)).join(', ')} ${scope}`;
    }
    return 'Always allow';
  });
  return parts.join('; ').trim();
}

/** A card of one request; `answer` sends the user's decision. */
function card(request: PermissionRequestNotification, ctx: ViewContext): HTMLElement {
  const el = h('section', {
    class: 'permission-card',
    attrs: { 'aria-label': `Permission request: ${request.toolName}`, 'data-request': request.requestId },
  });
  const error = h('div', { class: 'card-error', attrs: { role: 'alert' } });
  const answer = async (params: Omit<Answer, 'requestId'>) => {
    el.classList.add('answering');
    el.querySelectorAll<HTMLButtonElement | HTMLInputElement | HTMLTextAreaElement>('button, input, textarea').forEach(
      (c) => (c.disabled = true),
    );
    error.textContent = '';
    try {
      await ctx.request('respondPermission', { requestId: request.requestId, ...params });
    } catch (e) {
      el.classList.remove('answering');
      el.querySelectorAll<HTMLButtonElement | HTMLInputElement | HTMLTextAreaElement>(
        'button, input, textarea',
      ).forEach((c) => (c.disabled = false));
      error.textContent = (e as Error).message;
    }
  };
  if (request.toolName === 'AskUserQuestion') questionCard(el, request, answer);
  else if (request.toolName === 'ExitPlanMode') planCard(el, request, answer);
  else toolCard(el, request, ctx, answer);
  el.append(error);
  return el;
}

type Send = (params: Omit<Answer, 'requestId'>) => Promise<void>;

function toolCard(el: HTMLElement, request: PermissionRequestNotification, ctx: ViewContext, answer: Send): void {
  const cwd = ctx.state().folder;
  const name = request.displayName || toolLabel(request.toolName);
  const target = keyArgument({ name: request.toolName, input: request.input, partialInput: '' }, cwd);
  el.append(
    h(
      'header',
      { class: 'card-title' },
      h('span', { text: `Allow ${name}` }),
      target ? h('code', { class: 'card-target', text: target, title: target }) : null,
    ),
  );
  if (request.toolName === 'Bash') {
    el.append(h('pre', { class: 'tool-input', text: str(request.input.command) }));
    if (request.description) el.append(h('div', { class: 'note', text: request.description }));
  } else if (request.description && request.description !== target) {
    el.append(h('div', { class: 'note', text: request.description }));
  }
  if (request.preview !== undefined && request.preview !== null) el.append(diffView(request.preview, 20));
  else if (request.previewNote) el.append(h('div', { class: 'note', text: request.previewNote }));
  for (const fact of [request.decisionReason, request.blockedPath && `Path: ${request.blockedPath}`]) {
    if (fact) el.append(h('div', { class: 'note reason', text: fact }));
  }
  const reason = h('input', {
    class: 'deny-reason',
    attrs: {
      type: 'text',
      placeholder: 'Tell Claude what to do instead (optional)',
      'aria-label': 'Reason for denying',
    },
  });
  const deny = () =>
    void answer(reason.value.trim() ? { decision: 'deny', message: reason.value.trim() } : { decision: 'deny' });
  reason.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') {
      e.preventDefault();
      deny();
    }
  });
  const always = request.suggestions.length ? describeSuggestions(request.suggestions, cwd) : '';
  el.append(
    h(
      'div',
      { class: 'card-actions' },
      button('Allow', () => void answer({ decision: 'allow' }), { class: 'primary' }),
      always ? button(always, () => void answer({ decision: 'allowAlways' }), { title: always }) : null,
      button('Deny', deny, { class: 'danger' }),
      EDIT_TOOLS.has(request.toolName) && request.preview
        ? button(
            'Review in diff editor',
            () =>
              void ctx
                .request('reviewPermission', { requestId: request.requestId })
                .catch((e: unknown) => ctx.toast(errorText(e), 'error')),
            { class: 'link-button' },
          )
        : null,
    ),
    reason,
  );
}

function questionCard(el: HTMLElement, request: PermissionRequestNotification, answer: Send): void {
  const questions = (Array.isArray(request.input.questions) ? request.input.questions : []) as Question[];
  const chosen = questions.map(() => new Set<string>());
  const other = questions.map(() => '');
  const submit = button(
    'Submit answers',
    () => {
      const answers: Record<string, string> = {};
      questions.forEach((q, i) => {
        const labels = [...chosen[i]!];
        if (other[i]!.trim()) labels.push(other[i]!.trim());
        if (labels.length) answers[q.question] = labels.join(', ');
      });
      void answer({ decision: 'allow', answers });
    },
    { class: 'primary' },
  );
  const refresh = () => {
    submit.disabled = !questions.some((_, i) => chosen[i]!.size > 0 || other[i]!.trim());
  };
  el.append(
    h('header', {
      class: 'card-title',
      text: questions.length > 1 ? 'Claude has some questions' : 'Claude has a question',
    }),
  );
  questions.forEach((q, i) => {
    const options = h('div', {
      class: 'options',
      attrs: { role: q.multiSelect ? 'group' : 'radiogroup', 'aria-label': q.question },
    });
    const buttons: HTMLButtonElement[] = [];
    for (const option of q.options) {
      const b = h(
        'button',
        {
          class: 'option',
          attrs: { type: 'button', role: q.multiSelect ? 'checkbox' : 'radio', 'aria-checked': 'false' },
        },
        h('span', { class: 'option-label', text: option.label }),
        option.description ? h('span', { class: 'option-description', text: option.description }) : null,
      );
      b.addEventListener('click', () => {
        const set = chosen[i]!;
        if (q.multiSelect) {
          if (set.has(option.label)) set.delete(option.label);
          else set.add(option.label);
        } else {
          set.clear();
          set.add(option.label);
          otherInput.value = '';
          other[i] = '';
        }
        buttons.forEach((ob, k) => ob.setAttribute('aria-checked', String(set.has(q.options[k]!.label))));
        refresh();
      });
      buttons.push(b);
      options.append(b);
    }
    const otherInput = h('input', {
      class: 'other',
      attrs: {
        type: 'text',
        placeholder: q.multiSelect ? 'Something else (optional)' : 'Or type your own answer',
        'aria-label': `Own answer to: ${q.question}`,
      },
    });
    otherInput.addEventListener('input', () => {
      other[i] = otherInput.value;
      if (!q.multiSelect && otherInput.value.trim()) {
        chosen[i]!.clear();
        buttons.forEach((ob) => ob.setAttribute('aria-checked', 'false'));
      }
      refresh();
    });
    el.append(
      h(
        'div',
        { class: 'question' },
        h(
          'div',
          { class: 'question-head' },
          q.header ? h('span', { class: 'chip', text: q.header }) : null,
          h('span', { class: 'question-text', text: q.question }),
          q.multiSelect ? h('span', { class: 'note', text: '(choose any)' }) : null,
        ),
        options,
        otherInput,
      ),
    );
  });
  refresh();
  el.append(
    h(
      'div',
      { class: 'card-actions' },
      submit,
      button('Skip', () => void answer({ decision: 'deny', message: 'The user did not answer the questions.' })),
    ),
  );
}

function planCard(el: HTMLElement, request: PermissionRequestNotification, answer: Send): void {
  const plan = new MarkdownView('plan');
  plan.set(str(request.input.plan), false);
  const feedback = h('textarea', {
    class: 'plan-feedback',
    attrs: {
      rows: '2',
      placeholder: 'What should change in the plan? (for "Keep planning")',
      'aria-label': 'Feedback on the plan',
    },
  });
  el.append(
    h('header', { class: 'card-title', text: 'Ready to code? Here is Claude’s plan:' }),
    plan.el,
    h(
      'div',
      { class: 'card-actions' },
      button('Approve, auto-accept edits', () => void answer({ decision: 'allow', mode: 'acceptEdits' }), {
        class: 'primary',
      }),
      button('Approve, ask before edits', () => void answer({ decision: 'allow', mode: 'default' })),
      button(
        'Keep planning',
        () =>
          void answer({
            decision: 'deny',
            message: feedback.value.trim() || 'Keep planning: the user does not approve this plan yet.',
          }),
      ),
    ),
    feedback,
  );
}

/** The dock of cards: one per pending request, in the order they came. */
export class PermissionDock {
  readonly el = h('div', { class: 'permission-dock', attrs: { 'aria-live': 'assertive' } });
  private cards = new Map<string, HTMLElement>();

  constructor(private readonly ctx: ViewContext) {}

  update(state: ChatState): void {
    const pending = state.pending;
    for (const [id, el] of this.cards) {
      if (!(id in pending)) {
        el.remove();
        this.cards.delete(id);
      }
    }
    for (const request of Object.values(pending)) {
      if (this.cards.has(request.requestId)) continue;
      const el = card(request, this.ctx);
      this.cards.set(request.requestId, el);
      this.el.append(el);
    }
    setHidden(this.el, this.cards.size === 0);
  }

  clear(): void {
    this.cards.clear();
    this.el.replaceChildren();
  }
}
