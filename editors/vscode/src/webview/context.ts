// What the page's views share: the host, the page state, the chat state and the channel info.

import type { ChannelInfo } from '../core/protocol.generated';
import type { ChatState, FileUpdate } from '../core/chat-state';
import type { Request } from './host';
import type { ViewState } from './view-state';

export interface ViewContext {
  request: Request;
  view: ViewState;
  /** The chat state now (the views re-read it on every render). */
  state(): ChatState;
  info(): ChannelInfo | null;
  /** Shows a message at the bottom of the page for a few seconds (e.g. a request failed). */
  toast(text: string, level?: 'info' | 'error'): void;
  /** Asks to rewind files to before a prompt (dry run, confirm, rewind). */
  rewind(messageId: string): void;
  /** Runs `more` at the start of the next frame, before the transcript follows its end: a
   * view that drew only a slice of what is new (a long answer) draws the rest there. */
  nextFrame(more: () => void): void;
}

export function fileUpdate(ctx: ViewContext, seq: number): FileUpdate | undefined {
  return ctx.state().files.find((f) => f.seq === seq);
}

/** The claude/fileUpdated of one tool use (its diffs), oldest first. */
export function fileUpdatesOf(ctx: ViewContext, toolUseId: string): FileUpdate[] {
  return ctx.state().files.filter((f) => f.toolUseId === toolUseId);
}

/** What to show of a failure: an Error's message, or the value itself. */
export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Runs a request; a failure becomes a toast (and the error is returned to the caller's `catch`). */
export async function attempt<T>(ctx: ViewContext, what: string, run: () => Promise<T>): Promise<T | undefined> {
  try {
    return await run();
  } catch (e) {
    ctx.toast(`${what}: ${errorText(e)}`, 'error');
    return undefined;
  }
}
