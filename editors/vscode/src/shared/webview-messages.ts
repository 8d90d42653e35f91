// The messages between the extension host and one chat webview (one panel = one chat).
//
// The host owns the chat: it holds the channel, applies every claude/* notification of it
// to the chat's state (src/core/chat-state.ts: the entries and the channel's status) and forwards the
// same events to the webview, a frame's worth at a time, which applies them to its copy. A webview that is (re)created
// (the panel was hidden and VS Code dropped it, or the window reloaded) sends `ready` and
// gets the host's whole state back as `reset`: nothing is lost while it was away.
// What only the page knows (the draft, scroll position, collapsed blocks) it keeps with
// the webview API's getState/setState.
//
// The webview asks for things with `request` (an id and one of WebviewOps); the host
// answers each with exactly one `response`.

import type {
  ChannelInfo,
  ImageBlock,
  RespondPermissionParams,
  RewindFilesResult,
  SessionSummary,
} from '../core/protocol.generated';
import { reduce, type ChatEvent, type ChatState } from '../core/chat-state';
import { positionOf, release, type Entry, type SentTranscript } from '../core/transcript';

/**
 * The entries a `reset` carries whole: the last ones (what a page opened at its end draws
 * first). The others go by id alone (transcript.ts, toMessage) and the page asks for
 * those it draws (`entries`): a page made anew for a long chat decodes a few chunks, not the
 * whole chat.
 */
export const WHOLE_AT_RESET = 100;

/** An event and the host state's `rev` once it was applied: the page's copy takes the same
 * rev, so the two states stay equal even where consecutive deltas were joined into one. */
export interface RevEvent {
  event: ChatEvent;
  rev: number;
  /** The event is a text or thinking entry that finished streaming with the very text the
   * page has of it already (its deltas'): it comes with an empty text, and the page keeps
   * its own (applyOnPage). A long answer's whole text then does not go to the page a
   * second time, in the message that carries the turn's end. */
  textKept?: true;
}

/**
 * Applies `sent` to the page's copy `state` as the host applied it to its own; returns the
 * event as applied. A kept text is the page's own; an entry the page holds by id alone (far
 * from the view) stays so: its text is not the page's to fill in, the host has it whole and
 * gives it when the page draws it again.
 */
export function applyOnPage(state: ChatState, sent: RevEvent): ChatEvent {
  let event = sent.event;
  let far: string | undefined;
  if (sent.textKept && event.kind === 'notification' && event.method === 'claude/entry') {
    const entry = event.params.entry;
    const had = state.entries[positionOf(state, entry.id) ?? -1];
    if (had?.kind === 'far') far = entry.id;
    else if (
      (entry.kind === 'text' || entry.kind === 'thinking') &&
      (had?.kind === 'text' || had?.kind === 'thinking')
    ) {
      event = { ...event, params: { ...event.params, entry: { ...entry, text: had.text } } };
    }
  }
  // The host's rev after this event: the page's copy stays the host's state.
  state.rev = sent.rev - 1;
  reduce(state, event);
  if (far) release(state, [far]);
  return event;
}

/** What the host sends the webview. */
export type HostMessage =
  /** The whole chat, after `ready` or when the host rebuilt it (a daemon restart): its last
   * WHOLE_AT_RESET entries whole, the others by id alone. */
  | {
      type: 'reset';
      state: SentTranscript<ChatState>;
      info: ChannelInfo | null;
      workspaceFolders: string[];
      /** The user opted in to bypassPermissions (claudeSidecar.allowDangerouslySkipPermissions). */
      allowBypassPermissions: boolean;
    }
  /** Events the host already applied to its own state, in order (one frame's: see
   * src/extension/page-feed.ts); apply them to the page's copy. */
  | {
      type: 'events';
      events: RevEvent[];
      /** When the host posted them (wall clock, ms: performance.timeOrigin + now): the page
       * bench times the host's share of the way from the daemon with it. */
      postedAt?: number;
    }
  /** `claude/channelInfo` changed (the channel was (re)started). */
  | { type: 'info'; info: ChannelInfo | null }
  /** The answer to one `request`. */
  | { type: 'response'; id: number; result?: unknown; error?: { message: string; code?: number } }
  /** Put text into the prompt box (e.g. the command "send selection"), optionally sending it. */
  | { type: 'insertPrompt'; text: string; send: boolean }
  /** Move the keyboard focus to the prompt box. */
  | { type: 'focusPrompt' };

/** The operations the webview can ask the host for: params and result of each. */
export interface WebviewOps {
  /** Send a user message (text and pasted or dropped images). */
  send: { params: { text: string; images?: ImageBlock[] }; result: { messageId: string } };
  /** Stop the running turn. */
  interrupt: { params: Record<string, never>; result: null };
  /** Answer a permission request: claude/respondPermission's params; the host adds channelId. */
  respondPermission: { params: Omit<RespondPermissionParams, 'channelId'>; result: null };
  /** Open the proposed edit of a pending permission request in VS Code's diff editor. */
  reviewPermission: { params: { requestId: string }; result: null };
  /** Open a file update (by its event seq in the transcript) in VS Code's diff editor. */
  openFileDiff: { params: { seq: number }; result: null };
  /** Open a file in an editor, optionally at a 1-based line. */
  openFile: { params: { path: string; line?: number }; result: null };
  setModel: { params: { model: string | null; effort?: string }; result: null };
  setPermissionMode: { params: { mode: string }; result: null };
  /** Fork the conversation (at a message, or at the end) into a new chat panel. */
  fork: { params: { messageId?: string }; result: null };
  /** Rewind files to before a message: dryRun first to show what would change. */
  rewind: { params: { messageId: string; dryRun: boolean }; result: RewindFilesResult };
  /** Workspace files matching what follows `@` in the prompt. */
  completeFiles: { params: { query: string }; result: { paths: string[] } };
  /** Show the stored sessions of the workspace (a quick pick) and resume the one chosen. */
  showSessions: { params: Record<string, never>; result: null };
  /** Open a new chat panel. */
  newChat: { params: Record<string, never>; result: null };
  listSessions: { params: Record<string, never>; result: { sessions: SessionSummary[] } };
  /** The entries `ids` as the host has them now (those the page keeps by id alone and draws
   * again); an id the host does not have is left out. */
  entries: { params: { ids: string[] }; result: { entries: Entry[] } };
  /** Read the page of entries before the oldest shown (the chat's events bring it). */
  loadOlder: { params: Record<string, never>; result: { loaded: number; hasMore: boolean } };
}

export type WebviewOp = keyof WebviewOps;

/** What the webview sends the host. */
export type WebviewMessage =
  | { type: 'ready' }
  /** The page got an `events` message (the host's feed sends the next: src/extension/page-feed.ts). */
  | { type: 'received' }
  /** The page gained or lost the keyboard focus (the chat's keybindings follow it). */
  | { type: 'focus'; focused: boolean }
  | { [K in WebviewOp]: { type: 'request'; id: number; op: K; params: WebviewOps[K]['params'] } }[WebviewOp]
  /** Something the host should log (webview errors end up in the output channel). */
  | { type: 'log'; level: 'info' | 'warn' | 'error'; message: string };
