// The page's only line to the extension host: the contract messages of
// src/shared/webview-messages.ts over the webview API, with request/response correlation.

import type { HostMessage, WebviewMessage, WebviewOp, WebviewOps } from '../shared/webview-messages';

interface VsCodeApi {
  postMessage(message: WebviewMessage): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

export type Request = <K extends WebviewOp>(op: K, params: WebviewOps[K]['params']) => Promise<WebviewOps[K]['result']>;

export class HostError extends Error {
  constructor(
    message: string,
    readonly code?: number,
  ) {
    super(message);
  }
}

export class Host {
  /** acquireVsCodeApi may be called once per page load. */
  private readonly api: VsCodeApi = acquireVsCodeApi();
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (result: unknown) => void; reject: (error: Error) => void }>();

  readonly request: Request = (op, params) =>
    new Promise((resolve, reject) => {
      const id = this.nextId++;
      this.waiting.set(id, { resolve: resolve as (result: unknown) => void, reject });
      this.api.postMessage({ type: 'request', id, op, params } as WebviewMessage);
    });

  /** Settles the request a `response` answers. */
  settle(message: Extract<HostMessage, { type: 'response' }>): void {
    const waiter = this.waiting.get(message.id);
    if (!waiter) return;
    this.waiting.delete(message.id);
    if (message.error) waiter.reject(new HostError(message.error.message, message.error.code));
    else waiter.resolve(message.result);
  }

  ready(): void {
    this.api.postMessage({ type: 'ready' });
  }

  /** Says an `events` message came (the host sends the next ones: src/extension/page-feed.ts). */
  received(): void {
    this.api.postMessage({ type: 'received' });
  }

  /** Tells the host whether the page has the keyboard focus. */
  focused(focused: boolean): void {
    this.api.postMessage({ type: 'focus', focused });
  }

  log(level: 'info' | 'warn' | 'error', message: string): void {
    this.api.postMessage({ type: 'log', level, message });
  }

  getState(): unknown {
    return this.api.getState();
  }

  setState(state: unknown): void {
    this.api.setState(state);
  }
}
