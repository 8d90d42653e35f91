// One line under the transcript: what the chat is doing (working, waiting for the user,
// retrying a failed API request with a countdown, exited) and a Stop button while it works.

import type { ChatState } from '../core/chat-state';
import { attempt, type ViewContext } from './context';
import { button, h, setData, setHidden, setText } from './dom';

const REASONS: Record<string, string> = {
  overloaded: 'API overloaded',
  rate_limit: 'rate limited',
  server_error: 'API server error',
  network_error: 'network error',
};

export class StatusLine {
  readonly el: HTMLElement;
  private readonly text = h('span', { class: 'status-text', attrs: { role: 'status' } });
  private readonly stop: HTMLButtonElement;
  private timer: ReturnType<typeof setInterval> | undefined;
  private retryKey = '';

  constructor(private readonly ctx: ViewContext) {
    this.stop = button('Stop', () => this.interrupt(), { class: 'stop', title: 'Stop Claude (Esc)' });
    this.el = h(
      'div',
      { class: 'status-line' },
      h('span', { class: 'spinner', attrs: { 'aria-hidden': 'true' } }),
      this.text,
      this.stop,
    );
  }

  get running(): boolean {
    const state = this.ctx.state().status.state;
    return state === 'running' || state === 'awaitingPermission';
  }

  interrupt(): void {
    if (this.running) void attempt(this.ctx, 'Stop', () => this.ctx.request('interrupt', {}));
  }

  update(state: ChatState): void {
    const { status } = state;
    setData(this.el, 'state', status.state);
    setHidden(this.stop, !this.running);
    const retry = status.retry;
    const retryKey = retry ? `${retry.attempt}/${retry.retryInMs}` : '';
    if (retryKey !== this.retryKey) {
      this.retryKey = retryKey;
      clearInterval(this.timer);
      this.timer = undefined;
      if (retry) {
        const until = Date.now() + retry.retryInMs;
        const reason =
          (REASONS[retry.error] ?? `API error (${retry.error})`) + (retry.errorStatus ? ` ${retry.errorStatus}` : '');
        const tick = () => {
          const left = Math.max(0, Math.ceil((until - Date.now()) / 1000));
          this.text.textContent = `${reason}: retrying in ${left} s (attempt ${retry.attempt} of ${retry.maxRetries})`;
        };
        tick();
        this.timer = setInterval(tick, 1000);
        this.el.dataset.state = 'retrying';
        return;
      }
    }
    if (retry) {
      setData(this.el, 'state', 'retrying');
      return;
    }
    if (state.reconnecting) {
      setText(this.text, 'Reconnecting to the shared daemon… (the chat keeps running there)');
      setData(this.el, 'state', 'reconnecting');
      setHidden(this.el, false);
      return;
    }
    const exit = status.exit;
    const text = {
      new: '',
      starting: 'Starting Claude…',
      idle: '',
      running: 'Claude is working…',
      awaitingPermission: 'Waiting for your answer',
      exited: `Claude exited${exit ? ` (code ${exit.code ?? '–'}${exit.signal ? `, signal ${exit.signal}` : ''})` : ''}: the next message restarts it`,
    }[status.state];
    setText(this.text, text);
    setHidden(this.el, !text);
  }
}
