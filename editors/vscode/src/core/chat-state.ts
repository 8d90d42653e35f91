// The chat as a view shows it: the conversation's entries (the store in transcript.ts) and
// what only the client knows: the channel's status, the permission requests a card
// answers, the cost so far and the file updates (for diffs).
//
// `reduce` runs in the extension host for every event and again in the webview on its
// copy, so the two stay equal without sending the whole state again. It MUTATES the state
// and returns it; the state is plain JSON so it survives postMessage's structured clone.
// Pure TypeScript: no DOM, no vscode, no Node APIs.

import { IdMap } from './id-map';
import type {
  ClaudeNotifications,
  ContextReading,
  ExitInfo,
  PermissionRequest,
  FileUpdatedNotification,
  PermissionRequestNotification,
  RetryInfo,
  StatusNotification,
  TurnUsage,
} from './protocol.generated';
import {
  appendDelta,
  dropQueued,
  insertBefore,
  isWaitingPrompt,
  mergeTail,
  placePage,
  runningTurnPrompt,
  touch,
  upsert,
  type ConversationEntry,
  type Entry,
  type Transcript,
  type WaitingPrompt,
} from './transcript';

export type NoticeLevel = 'info' | 'warn' | 'error';

/** The notifications about a channel (with its `channelId` and `seq`): a chat's. */
export type ChannelNotifications = {
  [
    M in keyof ClaudeNotifications as ClaudeNotifications[M] extends { channelId: string; seq: number } ? M : never
  ]: ClaudeNotifications[M];
};

/** One notification of the chat's channel, as the daemon sent it. */
export type NotificationEvent = {
  [M in keyof ChannelNotifications]: { kind: 'notification'; method: M; params: ChannelNotifications[M] };
}[keyof ChannelNotifications];

export type ChatEvent =
  | NotificationEvent
  /** The channel's entries as the daemon keeps them (claude/getTranscript): a resumed or
   * forked chat's conversation so far, or what the chat missed; all of them, or the last
   * page. `hasOlder`, when set: whether older entries than the first of them are left to
   * read (a last page; absent: what the chat knew of that stays). */
  | { kind: 'transcript'; entries: ConversationEntry[]; hasOlder?: boolean }
  /** A resumed chat whose channel is still opening (its CLI reads the whole session first):
   * the session's last page as stored (claude/getHistory, read from the file's end), shown
   * until the channel's own page comes; the chat is starting. Its session and folder are
   * known already (a page reloaded meanwhile restores the chat from them). */
  | { kind: 'stored'; entries: ConversationEntry[]; hasOlder: boolean; sessionId: string; cwd: string }
  /** The chat's channel could not be opened (`text` says why): it is no longer starting. */
  | { kind: 'openFailed'; text: string }
  /** A prompt sent while the chat's channel opens (a resumed chat's CLI starting): shown at
   * once, waiting (WaitingPrompt), and sent with `id` as its uuid once the channel is open. */
  | { kind: 'waiting'; id: string; text: string; imageCount?: number }
  /** The waiting prompt `id` could not be sent (its channel did not open): a notice says so instead. */
  | { kind: 'notSent'; id: string }
  /** A page of older entries is being read (claude/getTranscript with `before`). */
  | { kind: 'olderLoading' }
  /** The page of older entries read: placed just before the entry `beforeId` (the first of
   * the page read before it); `hasOlder`: whether there are older ones still. */
  | { kind: 'olderPage'; entries: ConversationEntry[]; beforeId: string | null; hasOlder: boolean }
  /** Something the host has to say (a daemon restart, a request that failed); with
   * `beforeTurn`, something said of the turn still running as a whole (an attach mid-turn):
   * shown before that turn's prompt, not under its answer. */
  | { kind: 'notice'; level: NoticeLevel; text: string; beforeTurn?: boolean }
  /** The chat is served by this daemon channel now (a new one after a daemon restart), which
   * has cost `costUsd` so far and whose context is `context` (claude/channelInfo's: a resumed
   * chat's recorded turns). */
  | {
      kind: 'bound';
      channelId: string;
      sessionId: string;
      cwd: string;
      /** Where its CLI runs: `cwd`, or for a chat in a git worktree the same folder there. */
      folder?: string;
      costUsd?: number;
      context?: ContextReading | null;
    }
  /** The chat as the shared daemon has it now (claude/attach without afterSeq, or one whose
   * missed notifications left the replay window): its entries and the permission requests
   * waiting, as of the channel's notification `seq`. Replaces the conversation shown. */
  | {
      kind: 'snapshot';
      channelId: string;
      seq: number;
      entries: ConversationEntry[];
      pending: PermissionRequest[];
      /** The entries are the last page of the chat and older ones are left to read. */
      hasOlder?: boolean;
    }
  /** Shared daemon: the connection dropped and the chat waits to be re-attached (or it is back). */
  | { kind: 'connection'; reconnecting: boolean };

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

export interface ChatState extends Transcript {
  status: ChatStatus;
  /** Permission requests waiting for the user, by requestId (never the auto-allowed ones). */
  pending: Record<string, PermissionRequestNotification>;
  /** What the channel has cost so far, the last turn's tokens and the context meter. */
  totals: { costUsd: number; lastTurnUsage: TurnUsage | null; context: ContextReading | null };
  files: FileUpdate[];
  channelId: string | null;
  sessionId: string | null;
  cwd: string | null;
  /** The folder the chat's CLI runs in, which the paths it names are shown relative to: `cwd`,
   * or for a chat in a git worktree the same folder in the worktree. */
  folder: string | null;
  /** Shared daemon: the connection dropped; the chat is re-attached once it is made again. */
  reconnecting: boolean;
  /** Paged conversations (feature transcriptPaging): whether older entries than the first
   * shown are left to read (`more`), and whether a page of them is on its way. */
  older: { more: boolean; loading: boolean };
}

export function initialState(): ChatState {
  return {
    entries: [],
    queued: [],
    at: new IdMap(),
    shift: 0,
    revs: new IdMap(),
    status: { state: 'new', model: null, permissionMode: null, retry: null, exit: null },
    pending: {},
    totals: { costUsd: 0, lastTurnUsage: null, context: null },
    files: [],
    channelId: null,
    sessionId: null,
    cwd: null,
    folder: null,
    reconnecting: false,
    older: { more: false, loading: false },
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
      for (const entry of mergeTail(state, event.entries)) decided(state, entry);
      if (event.hasOlder !== undefined) state.older = { more: event.hasOlder, loading: false };
      break;
    case 'stored':
      for (const entry of mergeTail(state, event.entries)) decided(state, entry);
      state.older = { more: event.hasOlder, loading: false };
      if (state.status.state === 'new') state.status.state = 'starting';
      state.sessionId ??= event.sessionId;
      state.cwd ??= event.cwd;
      state.folder ??= event.cwd;
      break;
    case 'openFailed':
      if (state.status.state === 'starting') state.status.state = 'new';
      upsert(state, { kind: 'notice', id: `client:${state.rev}`, subtype: 'client', level: 'error', text: event.text });
      break;
    case 'waiting': {
      const { kind: _kind, ...prompt } = event;
      const waiting: WaitingPrompt = { ...prompt, kind: 'prompt', queued: true, waitingForStart: true };
      upsert(state, waiting);
      break;
    }
    case 'notSent': {
      const prompt = dropQueued(state, event.id);
      if (prompt) {
        const text = `Not sent: ${prompt.text}`;
        upsert(state, { kind: 'notice', id: `client:${state.rev}`, subtype: 'client', level: 'error', text });
      }
      break;
    }
    case 'olderLoading':
      state.older = { ...state.older, loading: true };
      break;
    case 'olderPage':
      for (const entry of placePage(state, event.entries, event.beforeId)) decided(state, entry);
      state.older = { more: event.hasOlder, loading: false };
      break;
    case 'notice': {
      // A notice of the client's own; its id is the same in the host's state and the page's.
      const notice: Entry = {
        kind: 'notice',
        id: `client:${state.rev}`,
        subtype: 'client',
        level: event.level,
        text: event.text,
      };
      const turn = event.beforeTurn ? runningTurnPrompt(state) : undefined;
      if (turn) insertBefore(state, notice, turn);
      else upsert(state, notice);
      break;
    }
    case 'bound':
      if (state.channelId && state.channelId !== event.channelId) state.pending = {};
      Object.assign(state, {
        channelId: event.channelId,
        sessionId: event.sessionId,
        cwd: event.cwd,
        folder: event.folder ?? event.cwd,
      });
      if (event.costUsd !== undefined) state.totals.costUsd = event.costUsd;
      if (event.context !== undefined) state.totals.context = event.context;
      break;
    case 'snapshot':
      // The daemon's conversation replaces what the chat showed (it may have missed any part of it).
      // Prompts waiting to be sent are not the daemon's yet: they stay.
      Object.assign(state, {
        entries: [],
        queued: state.queued.filter(isWaitingPrompt),
        at: new IdMap(),
        shift: 0,
        revs: new IdMap(),
        pending: {},
      });
      for (const entry of event.entries) onEntry(state, entry);
      state.older = { more: event.hasOlder ?? false, loading: false };
      for (const request of event.pending) {
        state.pending[request.requestId] = { ...request, channelId: event.channelId, seq: event.seq };
      }
      break;
    case 'connection':
      state.reconnecting = event.reconnecting;
      break;
  }
  return state;
}

function onNotification(state: ChatState, event: NotificationEvent): void {
  switch (event.method) {
    case 'claude/entry':
      onEntry(state, event.params.entry);
      break;
    case 'claude/delta':
      appendDelta(state, event.params);
      break;
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
      if (update.toolUseId) touch(state, update.toolUseId);
      else upsert(state, { kind: 'restoredFile', id: `file:${update.seq}`, seq: update.seq });
      break;
    }
    case 'claude/turnEnded':
      state.totals = {
        costUsd: event.params.totalCostUsd,
        lastTurnUsage: event.params.usage,
        context: event.params.context ?? state.totals.context,
      };
      break;
  }
}

/** An entry of the current channel: a decided permission no longer waits for the user. */
function onEntry(state: ChatState, entry: ConversationEntry): void {
  upsert(state, entry);
  decided(state, entry);
}

/** A tool entry whose permission was decided: its request no longer waits for the user. */
function decided(state: ChatState, entry: Entry): void {
  if (entry.kind === 'tool' && entry.permission?.requestId && entry.permission.decision !== 'pending') {
    delete state.pending[entry.permission.requestId];
  }
}
