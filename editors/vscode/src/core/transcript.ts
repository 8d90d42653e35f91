// The chat as a view shows it, built from the daemon's notifications: the transcript
// (prompts, answers, thinking, tool calls with their permission requests, results and
// file diffs, turn footers, notices) and the chat's status, pending permission requests,
// cost and file updates.
//
// `reduce` runs in the extension host for every event and again in the webview on its
// copy of the state, so the two stay equal without sending the whole state again. It
// MUTATES the state it is given and returns it (no copies on the hot path: appending a
// streamed delta costs O(delta)). The state is plain JSON (no Map, no class, no undefined
// that matters) so it survives postMessage's structured clone and JSON alike.
//
// Pure TypeScript: no DOM, no vscode, no Node APIs.
//
// How the CLI's stream maps to entries (CLI 2.1.330, see docs/protocol.md):
// - a `stream_event` `content_block_start` opens a block by (parent_tool_use_id, index): a
//   text, thinking or tool_use entry; `claude/delta`s append to the open block;
// - the `assistant` message then carries the complete block: its text replaces the streamed
//   one (`aborted: true` after an interrupt); sub-agents' messages come only complete;
// - `user` messages carry tool results (and the replay of the user's own prompt, which the
//   host already showed from `userMessage`: never twice);
// - `claude/turnEnded` closes a turn with its footer (the `result` message is not read).

import type {
  ClaudeNotifications,
  DeltaNotification,
  FileUpdatedNotification,
  History,
  HistoryMessage,
  PermissionRequestNotification,
  RetryInfo,
  StatusNotification,
  ExitInfo,
  TurnEndedNotification,
  TurnUsage,
} from './protocol.generated';

// ------------------------------------------------------------------ events

/** One notification of the chat's channel, as the daemon sent it. */
export type NotificationEvent = {
  [M in keyof ClaudeNotifications]: { kind: 'notification'; method: M; params: ClaudeNotifications[M] };
}[keyof ClaudeNotifications];

export type ChatEvent =
  | NotificationEvent
  /** claude/sendMessage returned: the prompt is shown now (its replay later is not). */
  | { kind: 'userMessage'; messageId: string; text: string; images: number }
  /** The stored conversation of a resumed session, before any live event. */
  | { kind: 'history'; history: History }
  /** Something the host has to say (a daemon restart, a request that failed). */
  | { kind: 'notice'; level: NoticeLevel; text: string }
  /** The chat is served by this daemon channel now (a new one after a daemon restart). */
  | { kind: 'bound'; channelId: string; sessionId: string; cwd: string };

export type NoticeLevel = 'info' | 'warn' | 'error';

// ------------------------------------------------------------------ state

interface EntryBase {
  /** Stable for the entry's life: a key for the view. */
  id: number;
  /** `ChatState.rev` when the entry last changed: a view re-renders entries newer than it drew. */
  rev: number;
  /** Set on a sub-agent's output: the id of the Agent/Task tool call that started it. */
  parentToolUseId: string | null;
}

export interface UserEntry extends EntryBase {
  kind: 'user';
  /** The id claude/sendMessage returned (or the history's uuid): for fork and rewind. */
  messageId: string | null;
  text: string;
  images: number;
}

export interface TextEntry extends EntryBase {
  kind: 'text';
  /** Markdown source. */
  text: string;
  streaming: boolean;
  /** The answer was cut short by an interrupt. */
  aborted: boolean;
}

export interface ThinkingEntry extends EntryBase {
  kind: 'thinking';
  text: string;
  streaming: boolean;
}

export type ToolStatus = 'pending' | 'running' | 'done' | 'error' | 'denied';

export interface ToolResult {
  /** The text parts of the tool_result content. */
  text: string;
  isError: boolean;
  images: number;
  /** The CLI's structured `tool_use_result` (file written, stdout/stderr, answers, ...), without `originalFile`. */
  details: unknown;
}

/** How a tool call's permission request went. `answered`: the user answered, the tool's result says how. */
export type PermissionState = 'pending' | 'answered' | 'allowed' | 'denied' | 'cancelled';

export interface ToolPermission {
  requestId: string;
  state: PermissionState;
  /** Allowed by the client's autoAllowTools rules: nobody was asked. */
  auto: boolean;
  /** The proposed edit as a unified diff (Write, Edit, MultiEdit). */
  preview: string | null;
  /** Why there is no preview. */
  previewNote: string | null;
  decisionReason: string | null;
}

export interface ToolEntry extends EntryBase {
  kind: 'tool';
  toolUseId: string;
  name: string;
  /** The complete input; null while it streams. */
  input: Record<string, unknown> | null;
  /** The input's JSON text as streamed so far; '' once complete. */
  partialInput: string;
  status: ToolStatus;
  result: ToolResult | null;
  permission: ToolPermission | null;
  /** `seq`s of the claude/fileUpdated this call made (see ChatState.files). */
  fileUpdates: number[];
}

export interface TurnEntry extends EntryBase {
  kind: 'turn';
  outcome: TurnEndedNotification['outcome'];
  durationMs: number;
  permissionWaitMs: number;
  costUsd: number;
  /** Why the turn failed (API error, CLI exit, ...); null unless outcome is 'error'. */
  error: string | null;
}

export interface NoticeEntry extends EntryBase {
  kind: 'notice';
  level: NoticeLevel;
  text: string;
}

/** A file changed by a rewind (claude/rewindFiles): no tool call to hang it on. */
export interface FileEntry extends EntryBase {
  kind: 'file';
  seq: number;
}

export type Entry = UserEntry | TextEntry | ThinkingEntry | ToolEntry | TurnEntry | NoticeEntry | FileEntry;
export type EntryKind = Entry['kind'];

/** A claude/fileUpdated without its contents (the host keeps those for its diff editor). */
export interface FileUpdate {
  seq: number;
  path: string;
  toolName: string;
  toolUseId: string | null;
  messageId: string | null;
  parentToolUseId: string | null;
  diff: string | null;
  notice: string | null;
}

export interface ChatStatus {
  state: StatusNotification['state'] | 'new';
  model: string | null;
  permissionMode: string | null;
  /** Set while the CLI waits to retry a failed model request. */
  retry: RetryInfo | null;
  exit: ExitInfo | null;
}

export interface ChatState {
  entries: Entry[];
  /** Prompts sent while a turn runs: shown after the entries until the CLI takes them up. */
  queued: UserEntry[];
  status: ChatStatus;
  /** Pending permission requests by requestId (never the auto-allowed ones). */
  pending: Record<string, PermissionRequestNotification>;
  /** What the channel has cost so far, and the last turn's tokens. */
  totals: { costUsd: number; lastTurnUsage: TurnUsage | null };
  files: FileUpdate[];
  channelId: string | null;
  sessionId: string | null;
  cwd: string | null;
  /** Bumped by every event that changes something. */
  rev: number;
  nextId: number;
  /** Bookkeeping of the reducer; views do not need it. */
  index: {
    /** tool_use id -> position in `entries`. */
    tools: Record<string, number>;
    /** Blocks streaming now, `<parentToolUseId>:<index>` -> position in `entries`. */
    open: Record<string, number>;
    /** A turn runs: a prompt sent now is queued behind it. */
    turnOpen: boolean;
  };
}

export function initialState(): ChatState {
  return {
    entries: [],
    queued: [],
    status: { state: 'new', model: null, permissionMode: null, retry: null, exit: null },
    pending: {},
    totals: { costUsd: 0, lastTurnUsage: null },
    files: [],
    channelId: null,
    sessionId: null,
    cwd: null,
    rev: 0,
    nextId: 1,
    index: { tools: {}, open: {}, turnOpen: false },
  };
}

// ------------------------------------------------------------------ reducer

/** Applies one event to `state` in place and returns it. */
export function reduce(state: ChatState, event: ChatEvent): ChatState {
  state.rev++;
  switch (event.kind) {
    case 'notification':
      onNotification(state, event);
      break;
    case 'userMessage':
      onUserMessage(state, event.messageId, event.text, event.images);
      break;
    case 'history':
      onHistory(state, event.history);
      break;
    case 'notice':
      add(state, { kind: 'notice', level: event.level, text: event.text, parentToolUseId: null });
      break;
    case 'bound':
      if (state.channelId && state.channelId !== event.channelId) endTurn(state);
      state.channelId = event.channelId;
      state.sessionId = event.sessionId;
      state.cwd = event.cwd;
      break;
  }
  return state;
}

function onNotification(state: ChatState, event: NotificationEvent): void {
  switch (event.method) {
    case 'claude/delta':
      onDelta(state, event.params);
      break;
    case 'claude/message':
      onMessage(state, event.params.message);
      break;
    case 'claude/status':
      onStatus(state, event.params);
      break;
    case 'claude/permissionRequest':
      onPermissionRequest(state, event.params);
      break;
    case 'claude/permissionCancelled': {
      const { requestId } = event.params;
      delete state.pending[requestId];
      const tool = toolOfRequest(state, requestId);
      if (tool?.permission) {
        tool.permission.state = 'cancelled';
        touch(state, tool);
      }
      break;
    }
    case 'claude/fileUpdated':
      onFileUpdated(state, event.params);
      break;
    case 'claude/turnEnded':
      onTurnEnded(state, event.params);
      break;
  }
}

// ------------------------------------------------------------------ entries

/** An entry before `add` gives it its id and rev (an Omit per kind, not of the union). */
type Draft<T> = T extends unknown ? Omit<T, 'id' | 'rev'> : never;
type NewEntry = Draft<Entry>;

function add(state: ChatState, entry: NewEntry): number {
  state.entries.push({ ...entry, id: state.nextId++, rev: state.rev });
  return state.entries.length - 1;
}

function touch(state: ChatState, entry: Entry): void {
  entry.rev = state.rev;
}

function tool(state: ChatState, toolUseId: string | null | undefined): ToolEntry | undefined {
  if (!toolUseId) return undefined;
  const at = state.index.tools[toolUseId];
  const entry = at === undefined ? undefined : state.entries[at];
  return entry?.kind === 'tool' ? entry : undefined;
}

function toolOfRequest(state: ChatState, requestId: string): ToolEntry | undefined {
  // Few tools wait for permission, and those are recent: search from the end.
  for (let i = state.entries.length - 1; i >= 0; i--) {
    const entry = state.entries[i];
    if (entry?.kind === 'tool' && entry.permission?.requestId === requestId) return entry;
  }
  return undefined;
}

/** Adds a tool call; returns its position in `entries`. */
function addTool(
  state: ChatState,
  toolUseId: string,
  name: string,
  parent: string | null,
  input: Record<string, unknown> | null,
): number {
  const at = add(state, {
    kind: 'tool',
    toolUseId,
    name,
    input,
    partialInput: '',
    status: input ? 'running' : 'pending',
    result: null,
    permission: null,
    fileUpdates: [],
    parentToolUseId: parent,
  });
  state.index.tools[toolUseId] = at;
  return at;
}

/** The tool call with this id, added first if there is none. */
function ensureTool(
  state: ChatState,
  toolUseId: string,
  name: string,
  parent: string | null,
  input: Record<string, unknown> | null,
): ToolEntry {
  return tool(state, toolUseId) ?? (state.entries[addTool(state, toolUseId, name, parent, input)] as ToolEntry);
}

// ------------------------------------------------------------------ prompts

function onUserMessage(state: ChatState, messageId: string, text: string, images: number): void {
  const entry: Omit<UserEntry, 'id' | 'rev'> = { kind: 'user', messageId, text, images, parentToolUseId: null };
  if (state.index.turnOpen) {
    state.queued.push({ ...entry, id: state.nextId++, rev: state.rev });
  } else {
    add(state, entry);
    state.index.turnOpen = true;
  }
}

/** Moves a queued prompt into the transcript (the CLI took it up); false if it is not queued. */
function takeUp(state: ChatState, messageId: string): boolean {
  const at = state.queued.findIndex((q) => q.messageId === messageId);
  if (at < 0) return false;
  const [entry] = state.queued.splice(at, 1);
  if (entry) state.entries.push({ ...entry, rev: state.rev });
  return true;
}

function hasPrompt(state: ChatState, messageId: string): boolean {
  // The prompt being echoed is one of the last few entries.
  for (let i = state.entries.length - 1; i >= 0; i--) {
    const entry = state.entries[i];
    if (entry?.kind === 'user' && entry.messageId === messageId) return true;
  }
  return false;
}

// ------------------------------------------------------------------ streaming

function blockKey(parent: string | null | undefined, index: number): string {
  return `${parent ?? ''}:${index}`;
}

function onDelta(state: ChatState, delta: DeltaNotification): void {
  const key = blockKey(delta.parentToolUseId, delta.index);
  const at = state.index.open[key];
  const entry = at === undefined ? undefined : state.entries[at];
  if (delta.kind === 'toolInput') {
    if (entry?.kind === 'tool') {
      entry.partialInput += delta.text;
      touch(state, entry);
    }
    return;
  }
  if (entry && entry.kind === delta.kind) {
    entry.text += delta.text;
    touch(state, entry);
    return;
  }
  // A delta without its block start (not seen with CLI 2.1.330): open the block here.
  state.index.open[key] = add(
    state,
    delta.kind === 'text'
      ? {
          kind: 'text',
          text: delta.text,
          streaming: true,
          aborted: false,
          parentToolUseId: delta.parentToolUseId ?? null,
        }
      : { kind: 'thinking', text: delta.text, streaming: true, parentToolUseId: delta.parentToolUseId ?? null },
  );
}

/** Ends the streaming of the open blocks of one stream (a parent), or of all of them. */
function closeBlocks(state: ChatState, parent?: string | null): void {
  const prefix = parent === undefined ? null : `${parent ?? ''}:`;
  for (const key of Object.keys(state.index.open)) {
    if (prefix !== null && !key.startsWith(prefix)) continue;
    const entry = state.entries[state.index.open[key] ?? -1];
    if (entry && (entry.kind === 'text' || entry.kind === 'thinking') && entry.streaming) {
      entry.streaming = false;
      touch(state, entry);
    }
    delete state.index.open[key];
  }
}

function onStreamEvent(state: ChatState, event: Json, parent: string | null): void {
  const type = str(event.type);
  if (type === 'message_start' || type === 'message_stop') {
    closeBlocks(state, parent);
  } else if (type === 'content_block_start') {
    const index = num(event.index);
    const block = obj(event.content_block);
    const kind = str(block.type);
    if (index === null) return;
    const key = blockKey(parent, index);
    if (kind === 'text') {
      state.index.open[key] = add(state, {
        kind: 'text',
        text: '',
        streaming: true,
        aborted: false,
        parentToolUseId: parent,
      });
    } else if (kind === 'thinking') {
      state.index.open[key] = add(state, { kind: 'thinking', text: '', streaming: true, parentToolUseId: parent });
    } else if (kind === 'tool_use' && str(block.id)) {
      const id = str(block.id);
      state.index.open[key] = state.index.tools[id] ?? addTool(state, id, str(block.name), parent, null);
    }
  } else if (type === 'content_block_stop') {
    const index = num(event.index);
    if (index === null) return;
    const key = blockKey(parent, index);
    const entry = state.entries[state.index.open[key] ?? -1];
    if (entry && (entry.kind === 'text' || entry.kind === 'thinking') && entry.streaming) {
      entry.streaming = false;
      touch(state, entry);
    }
    delete state.index.open[key];
  }
}

// ------------------------------------------------------------------ CLI messages

type Json = Record<string, unknown>;

function obj(value: unknown): Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {};
}
function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}
function num(value: unknown): number | null {
  return typeof value === 'number' ? value : null;
}
function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function onMessage(state: ChatState, message: Json): void {
  const parent = str(message.parent_tool_use_id) || null;
  switch (message.type) {
    case 'stream_event':
      onStreamEvent(state, obj(message.event), parent);
      break;
    case 'assistant':
      onAssistant(state, message, parent);
      break;
    case 'user':
      onUser(state, message, parent);
      break;
    case 'system':
      if (message.subtype === 'init') state.index.turnOpen = true;
      else if (message.subtype === 'compact_boundary') {
        add(state, { kind: 'notice', level: 'info', text: 'Conversation compacted', parentToolUseId: null });
      }
      break;
    // `result` is not read: claude/turnEnded says how the turn ended, without the CLI's
    // internal diagnostics (`errors: ["[ede_diagnostic] ..."]` of an interrupted turn).
  }
}

/** The open block of a stream that a complete `assistant` block of `kind` finishes. */
function openBlock(
  state: ChatState,
  parent: string | null,
  kind: 'text' | 'thinking',
): TextEntry | ThinkingEntry | undefined {
  const prefix = `${parent ?? ''}:`;
  for (const key of Object.keys(state.index.open)) {
    if (!key.startsWith(prefix)) continue;
    const entry = state.entries[state.index.open[key] ?? -1];
    if (entry?.kind === kind) return entry;
  }
  return undefined;
}

function onAssistant(state: ChatState, message: Json, parent: string | null): void {
  // An API error the CLI reports as an answer: the turn's footer says it.
  if (message.is_api_error_message === true) return;
  const aborted = message.aborted === true;
  for (const raw of list(obj(message.message).content)) {
    const block = obj(raw);
    if (block.type === 'tool_use') {
      const id = str(block.id);
      const input = obj(block.input);
      const entry = ensureTool(state, id, str(block.name), parent, input);
      entry.input = input;
      entry.partialInput = '';
      if (entry.status === 'pending' && entry.permission?.state !== 'pending') entry.status = 'running';
      touch(state, entry);
    } else if (block.type === 'text' || block.type === 'thinking') {
      const text = block.type === 'text' ? str(block.text) : str(block.thinking);
      const open = openBlock(state, parent, block.type);
      if (open) {
        open.text = text;
        open.streaming = false;
        if (open.kind === 'text') open.aborted = aborted;
        touch(state, open);
      } else if (text) {
        add(
          state,
          block.type === 'text'
            ? { kind: 'text', text, streaming: false, aborted, parentToolUseId: parent }
            : { kind: 'thinking', text, streaming: false, parentToolUseId: parent },
        );
      }
    }
  }
}

const LOCAL_COMMAND = /^\s*<(local-command-stdout|local-command-stderr)>([\s\S]*?)<\/\1>\s*$/;

function onUser(state: ChatState, message: Json, parent: string | null): void {
  const content = obj(message.message).content;
  const blocks = typeof content === 'string' ? [{ type: 'text', text: content }] : list(content).map(obj);
  const results = blocks.filter((b) => b.type === 'tool_result');
  if (results.length) {
    for (const block of results) onToolResult(state, message, block);
    return;
  }
  const uuid = str(message.uuid);
  const text = blocks
    .filter((b) => b.type === 'text')
    .map((b) => str(b.text))
    .join('\n');
  if (parent) return; // a sub-agent's prompt: its Agent call shows it
  if (message.isReplay === true && uuid) {
    state.index.turnOpen = true;
    if (takeUp(state, uuid) || hasPrompt(state, uuid)) return;
  }
  const local = LOCAL_COMMAND.exec(text);
  if (local) {
    add(state, {
      kind: 'notice',
      level: local[1] === 'local-command-stderr' ? 'warn' : 'info',
      text: (local[2] ?? '').trim(),
      parentToolUseId: null,
    });
  } else if (message.isReplay === true && text) {
    // A prompt this client did not send (another client of the session).
    add(state, {
      kind: 'user',
      messageId: uuid || null,
      text,
      images: blocks.filter((b) => b.type === 'image').length,
      parentToolUseId: null,
    });
  }
  // Anything else is the CLI's own text ("[Request interrupted by user]"): the turn footer says it.
}

function resultText(content: unknown): { text: string; images: number } {
  if (typeof content === 'string') return { text: content, images: 0 };
  const blocks = list(content).map(obj);
  return {
    text: blocks
      .filter((b) => b.type === 'text')
      .map((b) => str(b.text))
      .join('\n'),
    images: blocks.filter((b) => b.type === 'image').length,
  };
}

/** How the user answered a tool's permission request, from the result's `tool_result_meta`. */
function decisionOf(message: Json, toolUseId: string): 'allowed' | 'denied' | null {
  for (const raw of list(message.tool_result_meta)) {
    const meta = obj(raw);
    if (meta.id !== toolUseId) continue;
    if (meta.non_execution_kind === 'user-rejected') return 'denied';
    const decision = obj(meta.permission_decision).decision;
    if (decision === 'accept') return 'allowed';
    if (decision === 'reject') return 'denied';
  }
  return null;
}

function onToolResult(state: ChatState, message: Json, block: Json): void {
  const id = str(block.tool_use_id);
  const entry = tool(state, id);
  if (!entry) return;
  const { text, images } = resultText(block.content);
  const isError = block.is_error === true;
  let details: unknown = message.tool_use_result ?? null;
  if (details && typeof details === 'object' && 'originalFile' in details) {
    // The whole file before the edit: the host keeps it for its diff editor.
    const { originalFile: _dropped, ...rest } = details as Json;
    details = rest;
  }
  entry.result = { text, isError, images, details };
  const decision = decisionOf(message, id);
  const permission = entry.permission;
  if (permission && (permission.state === 'pending' || permission.state === 'answered')) {
    permission.state = decision ?? (isError ? 'denied' : 'allowed');
    delete state.pending[permission.requestId];
  }
  entry.status = entry.permission?.state === 'denied' || decision === 'denied' ? 'denied' : isError ? 'error' : 'done';
  entry.partialInput = '';
  touch(state, entry);
}

// ------------------------------------------------------------------ permissions, status, files, turns

function onPermissionRequest(state: ChatState, request: PermissionRequestNotification): void {
  const auto = request.autoDecision === 'allow';
  const entry = ensureTool(
    state,
    request.toolUseId ?? `request:${request.requestId}`,
    request.toolName,
    request.parentToolUseId ?? null,
    request.input,
  );
  // The CLI may have normalised the input (ExitPlanMode's plan is the plan file's text).
  entry.input = request.input;
  entry.partialInput = '';
  entry.permission = {
    requestId: request.requestId,
    state: auto ? 'allowed' : 'pending',
    auto,
    preview: request.preview ?? null,
    previewNote: request.previewNote ?? null,
    decisionReason: request.decisionReason ?? null,
  };
  if (!auto) {
    entry.status = 'pending';
    state.pending[request.requestId] = request;
  }
  touch(state, entry);
}

function onStatus(state: ChatState, status: StatusNotification): void {
  state.status = {
    state: status.state,
    model: status.model ?? state.status.model,
    permissionMode: status.permissionMode ?? state.status.permissionMode,
    retry: status.retry ?? null,
    exit: status.exit ?? null,
  };
  state.sessionId = status.sessionId;
  if (status.state === 'awaitingPermission') return;
  // No request is pending in any other state: those still listed were answered (their
  // tool's result will say how) or the channel is gone.
  for (const requestId of Object.keys(state.pending)) {
    delete state.pending[requestId];
    const entry = toolOfRequest(state, requestId);
    if (entry?.permission?.state === 'pending') {
      entry.permission.state = status.state === 'exited' ? 'cancelled' : 'answered';
      if (entry.status === 'pending') entry.status = status.state === 'exited' ? 'error' : 'running';
      touch(state, entry);
    }
  }
  if (status.state === 'exited') endTurn(state);
  if (status.state === 'idle') {
    // Idle: the CLI took up every prompt sent, or never will (it failed before echoing).
    state.index.turnOpen = false;
    for (const q of state.queued.splice(0)) state.entries.push({ ...q, rev: state.rev });
  }
}

function onFileUpdated(state: ChatState, update: FileUpdatedNotification): void {
  state.files.push({
    seq: update.seq,
    path: update.path,
    toolName: update.toolName,
    toolUseId: update.toolUseId,
    messageId: update.messageId,
    parentToolUseId: update.parentToolUseId,
    diff: update.diff,
    notice: update.notice,
  });
  const entry = tool(state, update.toolUseId);
  if (entry) {
    entry.fileUpdates.push(update.seq);
    touch(state, entry);
  } else {
    add(state, { kind: 'file', seq: update.seq, parentToolUseId: update.parentToolUseId });
  }
}

function onTurnEnded(state: ChatState, ended: TurnEndedNotification): void {
  endTurn(state);
  // A prompt the CLI answered without echoing it (it failed first) still goes above its footer.
  for (const id of ended.messageIds ?? []) takeUp(state, id);
  state.totals.costUsd = ended.totalCostUsd;
  state.totals.lastTurnUsage = ended.usage;
  add(state, {
    kind: 'turn',
    outcome: ended.outcome,
    durationMs: ended.durationMs,
    permissionWaitMs: ended.permissionWaitMs,
    costUsd: ended.costUsd,
    error: ended.error?.message ?? null,
    parentToolUseId: null,
  });
}

/** The turn is over (or its channel is gone): nothing streams, nothing waits any more. */
function endTurn(state: ChatState): void {
  closeBlocks(state);
  state.index.turnOpen = false;
  for (const requestId of Object.keys(state.pending)) {
    delete state.pending[requestId];
    const entry = toolOfRequest(state, requestId);
    if (entry?.permission) entry.permission.state = 'cancelled';
  }
  // Tool calls of the main conversation without a result never ran to the end. (A
  // sub-agent in the background may still be working on its own.)
  for (let i = state.entries.length - 1; i >= 0; i--) {
    const entry = state.entries[i];
    if (entry?.kind === 'turn') break;
    if (
      entry?.kind === 'tool' &&
      !entry.parentToolUseId &&
      (entry.status === 'pending' || entry.status === 'running')
    ) {
      entry.status = 'error';
      touch(state, entry);
    }
  }
}

// ------------------------------------------------------------------ history

function onHistory(state: ChatState, history: History): void {
  const live = state.entries;
  state.entries = [];
  const openBefore = state.index.open;
  for (const m of history.messages) fromHistory(state, m);
  // Entries from the history come first: anything live moves behind them.
  const shift = state.entries.length;
  for (const entry of live) state.entries.push(entry);
  for (const [key, at] of Object.entries(openBefore)) state.index.open[key] = at + shift;
  state.index.tools = {};
  state.entries.forEach((entry, at) => {
    if (entry.kind === 'tool') state.index.tools[entry.toolUseId] = at;
  });
  state.sessionId ??= history.sessionId;
  for (const warning of history.warnings) {
    add(state, { kind: 'notice', level: 'warn', text: `history: ${warning}`, parentToolUseId: null });
  }
}

const HISTORY_NOTICES: Record<string, NoticeLevel> = {
  compactBoundary: 'info',
  commandOutput: 'info',
  apiError: 'error',
};

function fromHistory(state: ChatState, m: HistoryMessage): void {
  const parent = m.parentToolUseId ?? null;
  const text = m.text ?? '';
  switch (m.kind) {
    case 'userPrompt':
      if (!parent)
        add(state, { kind: 'user', messageId: m.uuid, text, images: m.imageCount ?? 0, parentToolUseId: null });
      break;
    case 'assistantText':
      add(state, { kind: 'text', text, streaming: false, aborted: false, parentToolUseId: parent });
      break;
    case 'thinking':
      add(state, { kind: 'thinking', text, streaming: false, parentToolUseId: parent });
      break;
    case 'toolUse':
      // Done unless its result says otherwise: a stored call without a result runs no more.
      if (m.toolUseId)
        (state.entries[addTool(state, m.toolUseId, m.toolName ?? 'tool', parent, obj(m.input))] as ToolEntry).status =
          'done';
      break;
    case 'toolResult': {
      const entry = tool(state, m.toolUseId);
      if (!entry) break;
      const isError = m.isError === true;
      entry.result = { text, isError, images: m.imageCount ?? 0, details: null };
      if (m.permission) {
        entry.permission = {
          requestId: '',
          state: m.permission,
          auto: false,
          preview: null,
          previewNote: null,
          decisionReason: null,
        };
      }
      entry.status = m.permission === 'denied' ? 'denied' : isError ? 'error' : 'done';
      break;
    }
    case 'system': {
      const level = HISTORY_NOTICES[m.subtype ?? ''];
      if (level && !parent) add(state, { kind: 'notice', level, text, parentToolUseId: null });
      break;
    }
  }
}
