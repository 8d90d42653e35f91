// The chat as a view shows it: the daemon's conversation entries (docs/protocol.md, "The
// conversation") kept by id, and what only the client knows: the channel's status, the
// permission requests a card answers, the cost so far and the file updates (for diffs).
//
// The daemon computes every entry; this store only places them: `claude/entry` replaces
// the entry with its id or adds it in the order first seen, `claude/delta` appends to its
// `entryId`, and queued prompts are listed last until the CLI takes them up.
//
// `reduce` runs in the extension host for every event and again in the webview on its
// copy, so the two stay equal without sending the whole state again. It MUTATES the state
// and returns it (a delta costs O(delta)); the state is plain JSON so it survives
// postMessage's structured clone. Pure TypeScript: no DOM, no vscode, no Node APIs.

import type {
  ClaudeNotifications,
  EntryNotification,
  ExitInfo,
  FileUpdatedNotification,
  PermissionRequestNotification,
  PromptEntry,
  RetryInfo,
  StatusNotification,
  TurnUsage,
} from './protocol.generated';

/** An entry of the daemon's conversation. */
export type ConversationEntry = EntryNotification['entry'];
export type { NoticeEntry, PromptEntry, TextEntry, ThinkingEntry, ToolEntry, TurnEntry } from './protocol.generated';

/** A file a rewind restored (claude/fileUpdated without a tool use): the client's own entry. */
export interface RestoredFileEntry {
  kind: 'restoredFile';
  id: string;
  seq: number;
}

export type Entry = ConversationEntry | RestoredFileEntry;
export type NoticeLevel = 'info' | 'warn' | 'error';

/** One notification of the chat's channel, as the daemon sent it. */
export type NotificationEvent = {
  [M in keyof ClaudeNotifications]: { kind: 'notification'; method: M; params: ClaudeNotifications[M] };
}[keyof ClaudeNotifications];

export type ChatEvent =
  | NotificationEvent
  /** The channel's entries as the daemon keeps them (claude/getTranscript): a resumed or
   * forked chat's conversation so far, or what the chat missed. */
  | { kind: 'transcript'; entries: ConversationEntry[] }
  /** Something the host has to say (a daemon restart, a request that failed). */
  | { kind: 'notice'; level: NoticeLevel; text: string }
  /** The chat is served by this daemon channel now (a new one after a daemon restart). */
  | { kind: 'bound'; channelId: string; sessionId: string; cwd: string };

/** A claude/fileUpdated without its contents (the host keeps those for its diff editor). */
export type FileUpdate = Pick<
  FileUpdatedNotification,
  'seq' | 'path' | 'toolName' | 'toolUseId' | 'messageId' | 'parentToolUseId' | 'diff' | 'notice'
>;

export interface ChatStatus {
  state: StatusNotification['state'] | 'new';
  model: string | null;
  permissionMode: string | null;
  /** Set while the CLI waits to retry a failed model request. */
  retry: RetryInfo | null;
  exit: ExitInfo | null;
}

export interface ChatState {
  /** The conversation in the order each entry was first seen (queued prompts aside). */
  entries: Entry[];
  /** Prompts sent while a turn runs, listed after the entries until the CLI takes them up. */
  queued: PromptEntry[];
  /** Entry id -> its position in `entries`. */
  at: Record<string, number>;
  /** Entry id -> `rev` when it last changed: a view redraws the entries newer than it drew. */
  revs: Record<string, number>;
  status: ChatStatus;
  /** Permission requests waiting for the user, by requestId (never the auto-allowed ones). */
  pending: Record<string, PermissionRequestNotification>;
  /** What the channel has cost so far, and the last turn's tokens. */
  totals: { costUsd: number; lastTurnUsage: TurnUsage | null };
  files: FileUpdate[];
  channelId: string | null;
  sessionId: string | null;
  cwd: string | null;
  /** Bumped by every event. */
  rev: number;
}

export function initialState(): ChatState {
  return {
    entries: [],
    queued: [],
    at: {},
    revs: {},
    status: { state: 'new', model: null, permissionMode: null, retry: null, exit: null },
    pending: {},
    totals: { costUsd: 0, lastTurnUsage: null },
    files: [],
    channelId: null,
    sessionId: null,
    cwd: null,
    rev: 0,
  };
}

/** Applies one event to `state` in place and returns it. */
export function reduce(state: ChatState, event: ChatEvent): ChatState {
  state.rev++;
  switch (event.kind) {
    case 'notification':
      onNotification(state, event);
      break;
    case 'transcript':
      // Current as of the last notification applied: each entry replaces what the chat has of it.
      for (const entry of event.entries) onEntry(state, entry);
      break;
    case 'notice':
      notice(state, event.level, event.text);
      break;
    case 'bound':
      if (state.channelId && state.channelId !== event.channelId) state.pending = {};
      Object.assign(state, { channelId: event.channelId, sessionId: event.sessionId, cwd: event.cwd });
      break;
  }
  return state;
}

function onNotification(state: ChatState, event: NotificationEvent): void {
  switch (event.method) {
    case 'claude/entry':
      onEntry(state, event.params.entry);
      break;
    case 'claude/delta': {
      const entry = state.entries[state.at[event.params.entryId ?? ''] ?? -1];
      if (entry?.kind === 'tool') entry.partialInput = (entry.partialInput ?? '') + event.params.text;
      else if (entry?.kind === 'text' || entry?.kind === 'thinking') entry.text += event.params.text;
      if (entry) state.revs[entry.id] = state.rev;
      break;
    }
    case 'claude/status': {
      const status = event.params;
      state.status = {
        state: status.state,
        model: status.model ?? state.status.model,
        permissionMode: status.permissionMode ?? state.status.permissionMode,
        retry: status.retry ?? null,
        exit: status.exit ?? null,
      };
      state.sessionId = status.sessionId;
      // Nothing waits for the user once the turn is over (or the CLI is gone).
      if (status.state === 'idle' || status.state === 'exited') state.pending = {};
      break;
    }
    case 'claude/permissionRequest':
      if (event.params.autoDecision !== 'allow') state.pending[event.params.requestId] = event.params;
      break;
    case 'claude/permissionCancelled':
      delete state.pending[event.params.requestId];
      break;
    case 'claude/fileUpdated': {
      const { channelId: _channel, oldContent: _old, newContent: _new, ...update } = event.params;
      state.files.push(update);
      // The tool's view shows the diff: it is redrawn like a changed entry.
      if (update.toolUseId && update.toolUseId in state.at) state.revs[update.toolUseId] = state.rev;
      if (!update.toolUseId) upsert(state, { kind: 'restoredFile', id: `file:${update.seq}`, seq: update.seq });
      break;
    }
    case 'claude/turnEnded':
      state.totals = { costUsd: event.params.totalCostUsd, lastTurnUsage: event.params.usage };
      break;
  }
}

/** An entry of the current channel. */
function onEntry(state: ChatState, entry: ConversationEntry): void {
  upsert(state, entry);
  if (entry.kind === 'tool' && entry.permission?.requestId && entry.permission.decision !== 'pending') {
    delete state.pending[entry.permission.requestId];
  }
}

/** Replaces the entry with the same id or adds it (a copy: deltas append to it). */
function upsert(state: ChatState, incoming: Entry): void {
  const entry = { ...incoming };
  state.revs[entry.id] = state.rev;
  const at = state.at[entry.id];
  const queuedAt = state.queued.findIndex((q) => q.id === entry.id);
  if (entry.kind === 'prompt' && entry.queued) {
    if (queuedAt >= 0) state.queued[queuedAt] = entry;
    else if (at === undefined) state.queued.push(entry);
    else state.entries[at] = entry;
    return;
  }
  if (queuedAt >= 0) state.queued.splice(queuedAt, 1); // taken up: it moves to the end
  if (at !== undefined) {
    state.entries[at] = entry;
  } else {
    state.at[entry.id] = state.entries.length;
    state.entries.push(entry);
  }
}

/** A notice of the client's own; its id is the same in the host's state and the page's. */
function notice(state: ChatState, level: NoticeLevel, text: string): void {
  upsert(state, { kind: 'notice', id: `client:${state.rev}`, subtype: 'client', level, text });
}

/** The entries in the order a view lists them: the conversation, then the queued prompts. */
export function listed(state: ChatState): Entry[] {
  return [...state.entries, ...state.queued];
}
