// One conversation as the user sees it: a stable identity over the daemon channels that
// serve it (a daemon restart gives it a new channel on the same session), its transcript
// state, and the claude/* requests that act on it.

import { randomUUID } from 'node:crypto';
import { Emitter, type Event } from 'vscode-jsonrpc/node';
import type { DaemonConnection } from './connection';
import { SidecarError } from './errors';
import type {
  AttachResult,
  ChannelInfo,
  ChannelSummary,
  ClaudeNotifications,
  ContextUsageResult,
  FileUpdatedNotification,
  Transcript as TranscriptPage,
  ImageBlock,
  NewChannelParams,
  PermissionRequestNotification,
  RespondPermissionParams,
  RewindFilesResult,
  SendMessageParams,
  SetModelParams,
  SetPermissionModeParams,
  StatusNotification,
  TextBlock,
  WorktreeInfo,
} from './protocol.generated';
import { initialState, reduce, type ChannelNotifications, type ChatEvent, type ChatState } from './chat-state';
import type { Entry } from './transcript';

/**
 * The folder a chat asked for in `cwd` runs in: `cwd` itself, or for a chat in git worktree
 * `worktree` the same folder in the worktree (the daemon runs it there: a chat opened from a
 * checkout's subfolder runs in that subfolder of its worktree).
 */
export function runsIn(cwd: string, worktree: WorktreeInfo | null | undefined): string {
  if (!worktree) return cwd;
  const inside = (folder: string, top: string) =>
    folder === top || folder.startsWith(top.endsWith('/') ? top : `${top}/`);
  if (inside(cwd, worktree.path)) return cwd;
  if (inside(cwd, worktree.root)) return worktree.path + cwd.slice(worktree.root.replace(/\/+$/, '').length);
  return worktree.path;
}

/** The first entry of the conversation among `entries` (queued prompts are not in it). */
function firstEntry(entries: readonly Entry[]): Entry | undefined {
  return entries.find((e) => !(e.kind === 'prompt' && e.queued));
}

/** Whether two JSON values are equal: the same keys (in any order) with equal values. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keysA = Object.keys(a);
  const keysB = Object.keys(b);
  if (keysA.length !== keysB.length) return false;
  return keysA.every(
    (k) => Object.hasOwn(b, k) && sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
  );
}

/** The contents of one file update, kept out of ChatState (which goes to the webview). */
export interface FileContents {
  path: string;
  oldContent: string | null;
  newContent: string | null;
}

/** Files kept for diffs at most; older updates can no longer be opened side by side. */
const KEPT_FILE_UPDATES = 200;

/** What reading the page of older entries gave: how many entries, and whether older ones are left. */
export interface OlderPage {
  loaded: number;
  hasMore: boolean;
}

export class Chat {
  private readonly eventEmitter = new Emitter<ChatEvent>();
  /** Every event after it was applied to `state`, in order. */
  readonly onEvent: Event<ChatEvent> = this.eventEmitter.event;
  private readonly closedEmitter = new Emitter<void>();
  readonly onClosed: Event<void> = this.closedEmitter.event;
  private readonly infoEmitter = new Emitter<ChannelInfo | null>();
  /** `info` changed: the chat moved to a new channel, or its model, effort or mode was set. */
  readonly onInfo: Event<ChannelInfo | null> = this.infoEmitter.event;

  state: ChatState = initialState();
  info: ChannelInfo | null = null;
  /** The channel's latest claude/status. */
  status: StatusNotification | undefined;
  /** What the conversation has cost so far (US dollars). */
  totalCostUsd = 0;
  /** The pid of the CLI serving the chat now. */
  pid: number | undefined;
  channelId: string | undefined;
  sessionId: string | undefined;
  /** The channel's pending permission requests, whole (the state keeps what the view needs). */
  readonly permissionRequests = new Map<string, PermissionRequestNotification>();
  /** The permission requests this client answered: their `answeredElsewhere` is its own answer. */
  private readonly answered = new Set<string>();
  /** File updates by notification seq, with their contents. */
  readonly fileContents = new Map<number, FileContents>();
  /** The highest `seq` the chat has seen, and what is added to the current channel's. */
  private lastSeq = 0;
  private seqOffset = 0;
  /** The current channel's last notification number (the channel's own count). */
  private channelSeq = 0;
  /** True once a message was taken: the session exists on disk and can be resumed. */
  hasConversation = false;
  closed = false;
  /** Closed with `keepRunning`: the chat goes on in the shared daemon without this client. */
  keptRunning = false;
  /** Shared daemon: the connection dropped and the chat waits to be re-attached. */
  reconnecting = false;
  /** While re-attaching: the channel's notifications, applied once the attach answered. */
  private held: [keyof ChannelNotifications, ChannelNotifications[keyof ChannelNotifications]][] | undefined;
  /** Paging: the `before` of the page older than the entries read (null: none is left, or it
   * must be found anew on a new channel), and the first entry of the oldest page read. */
  private olderCursor: string | null = null;
  private oldestId: string | null = null;
  /** Counts the times the chat's pages were read afresh: a page of older entries asked for
   * before is of what the chat showed then, and is dropped. */
  private pages = 0;
  /** The page of older entries on its way: asked once, whoever asks again gets its answer. */
  private olderRead: Promise<OlderPage> | undefined;
  /** A resumed chat's first channel on its way (newChannel, then its transcript): what a
   * message sent or an older page asked for meanwhile waits for. */
  private opening: Promise<void> | undefined;
  /** The stored last page the chat shows while its channel opens (showStored), until the
   * channel's own last page comes. */
  private storedPage: Pick<TranscriptPage, 'entries' | 'hasMore'> | undefined;

  constructor(
    /** Stable within this client: `chat-1`, `chat-2`, ... */
    readonly id: string,
    /** What opened the channel; reused (with `resume`) when the chat moves to a new daemon. */
    readonly channelParams: NewChannelParams,
    private readonly daemon: () => Promise<DaemonConnection>,
    /** Ends the chat's channel, or with `keepRunning` (shared daemon) only stops showing it. */
    private readonly onClose: (chat: Chat, keepRunning: boolean) => Promise<void>,
    /** The entries of a page when the daemon serves paging (transcriptPaging); undefined: it
     * does not, or paging is off: the whole conversation is read at once. */
    readonly pageLimit: () => number | undefined = () => undefined,
  ) {}

  /** The `seq` of the last notification of the current channel the chat applied: what
   * `claude/attach`'s `afterSeq` names when the chat comes back to the shared daemon. */
  get seq(): number {
    return this.channelSeq;
  }

  get cwd(): string {
    return this.channelParams.cwd;
  }

  /** The folder the chat's CLI runs in: `cwd`, or for a chat in a git worktree the same
   * folder in the worktree (what a path the agent names, or the user types, is relative to). */
  get folder(): string {
    return runsIn(this.cwd, this.info?.worktree);
  }

  /**
   * What opens the chat's next channel (a daemon restart, a dropped chat reopened, a fork):
   * the parameters it was opened with, in the permission mode it runs in now, which the user
   * (or the CLI, leaving plan mode) may have changed since.
   */
  reopenParams(): NewChannelParams {
    const mode = this.status?.permissionMode ?? this.info?.permissionMode;
    return mode
      ? { ...this.channelParams, permissionMode: mode as NewChannelParams['permissionMode'] }
      : { ...this.channelParams };
  }

  /** The user's prompts taken up so far, oldest first: where a fork or rewind can start. */
  get prompts(): { messageId: string; text: string }[] {
    return this.state.entries.flatMap((e) =>
      e.kind === 'prompt' && !e.parentId ? [{ messageId: e.id, text: e.text }] : [],
    );
  }

  /** Applies one event to the state and tells the listeners. */
  apply(event: ChatEvent): void {
    this.state = reduce(this.state, event);
    this.eventEmitter.fire(event);
  }

  /** Serves the chat from a (new) daemon channel. */
  bind(channelId: string, sessionId: string, info: ChannelInfo | null, pid?: number): void {
    this.seqOffset = this.lastSeq;
    this.channelSeq = 0;
    this.held = undefined;
    // A cursor belongs to its channel: the new one's is found from its last page when needed.
    this.olderCursor = null;
    this.pages++;
    this.channelId = channelId;
    this.pid = pid;
    this.sessionId = sessionId;
    this.info = info;
    this.permissionRequests.clear();
    // A resumed channel has cost what its session's recorded turns did.
    if (info) this.totalCostUsd = info.totalCostUsd;
    this.apply({
      kind: 'bound',
      channelId,
      sessionId,
      cwd: this.cwd,
      folder: this.folder,
      ...(info ? { costUsd: info.totalCostUsd, context: info.context } : {}),
    });
    this.infoEmitter.fire(info);
  }

  /**
   * The chat's channel is gone with its daemon. Channel ids are only unique within one
   * daemon (each counts from ch-1): until `bind`, nothing may be routed here by its old id.
   */
  unbind(): void {
    this.channelId = undefined;
    this.pid = undefined;
    this.held = undefined;
    this.permissionRequests.clear();
  }

  /**
   * Shows the chat as the shared daemon has it (claude/attach's `entries` and pending
   * permission requests as of `seq`): what was shown is replaced, and the channel's
   * notifications numbered after `seq` follow.
   */
  applySnapshot(
    result: Pick<AttachResult, 'channelId' | 'seq' | 'entries' | 'pendingPermissions'> &
      Partial<Pick<AttachResult, 'hasMore' | 'nextCursor'>>,
  ): void {
    // What was shown goes, a stored last page too.
    this.storedPage = undefined;
    const hasOlder = this.takeCursor(result.entries ?? [], result);
    this.channelSeq = result.seq;
    this.lastSeq = this.seqOffset + result.seq;
    this.permissionRequests.clear();
    for (const request of result.pendingPermissions) {
      this.permissionRequests.set(request.requestId, { ...request, channelId: result.channelId, seq: result.seq });
    }
    this.apply({
      kind: 'snapshot',
      channelId: result.channelId,
      seq: result.seq,
      entries: result.entries ?? [],
      pending: result.pendingPermissions,
      hasOlder,
    });
  }

  /**
   * The chat's channel is on its way (`opening` settles once the chat is served by it, its
   * transcript taken): messages sent and older pages asked for until then wait for it, and
   * fail with its error.
   */
  opensWith(opening: Promise<void>): void {
    this.opening = opening;
    opening.then(
      () => {
        if (this.opening === opening) this.opening = undefined;
      },
      (e: unknown) => {
        this.storedPage = undefined;
        this.apply({ kind: 'openFailed', text: `Could not open the session: ${(e as Error).message}` });
      },
    );
  }

  /**
   * Shows a resumed session's last page as stored (claude/getHistory) while its channel
   * opens; once the channel's last page comes (loadTranscript), it is kept as shown when it
   * is the same page, and replaces it when not.
   */
  showStored(page: Pick<TranscriptPage, 'entries' | 'hasMore'>): void {
    this.storedPage = page;
    this.apply({
      kind: 'stored',
      entries: page.entries,
      hasOlder: page.hasMore,
      sessionId: this.channelParams.resume ?? '',
      cwd: this.cwd,
    });
  }

  /** The permission requests waiting now, as an attach answer lists them (notifications kept them current). */
  private pendingNow(): AttachResult['pendingPermissions'] {
    return [...this.permissionRequests.values()].map(
      ({ channelId: _channel, seq: _seq, autoDecision: _auto, ...request }) => request,
    );
  }

  /** Keeps what a last page (or the whole conversation) says of older entries; returns whether there are any. */
  private takeCursor(
    entries: readonly Entry[],
    page: Partial<Pick<TranscriptPage, 'hasMore' | 'nextCursor'>>,
  ): boolean {
    this.pages++;
    const hasOlder = page.hasMore === true && typeof page.nextCursor === 'string';
    this.olderCursor = hasOlder ? page.nextCursor! : null;
    this.oldestId = firstEntry(entries)?.id ?? null;
    return hasOlder;
  }

  /**
   * Reads the page of entries before the oldest the chat has (feature transcriptPaging) and
   * places it above them: every entry once, in order. One read at a time: a call while one is
   * on its way gets that one's answer. Nothing is read when no older entry is left.
   */
  loadOlder(): Promise<OlderPage> {
    this.olderRead ??= this.readOlder().finally(() => (this.olderRead = undefined));
    return this.olderRead;
  }

  private async readOlder(): Promise<OlderPage> {
    if (this.opening) {
      // Shown from its stored last page while its channel opens: the older pages are read
      // from the channel's transcript, with its cursor, once the channel has it.
      this.apply({ kind: 'olderLoading' });
      await this.opening.catch(() => undefined);
    }
    const limit = this.pageLimit();
    const channelId = this.channelId;
    // Between channels (a daemon restart) nothing is read; the user's next scroll asks again.
    if (!limit || !channelId || this.closed || !this.state.older.more) {
      if (this.state.older.loading) {
        this.apply({ kind: 'olderPage', entries: [], beforeId: null, hasOlder: this.state.older.more });
      }
      return { loaded: 0, hasMore: this.state.older.more };
    }
    const pages = this.pages;
    // The chat was shown afresh meanwhile (or moved to a new channel): this page is of what
    // it showed before. Nothing is placed; what it says of older entries stays.
    const stale = () => {
      if (pages === this.pages && channelId === this.channelId) return false;
      if (this.state.older.loading) {
        this.apply({ kind: 'olderPage', entries: [], beforeId: null, hasOlder: this.state.older.more });
      }
      return true;
    };
    this.apply({ kind: 'olderLoading' });
    try {
      const daemon = await this.daemon();
      if (this.olderCursor === null) {
        // A new channel of the session: its own last page gives the cursor; the entries the
        // chat has of it are replaced in place. The pages before it are read again from there
        // (their entries, which the chat has, stay where they are) up to the oldest read.
        const last = await daemon.request('claude/getTranscript', { channelId, limit });
        if (stale()) return { loaded: 0, hasMore: this.state.older.more };
        this.apply({ kind: 'transcript', entries: last.entries });
        this.olderCursor = last.hasMore ? last.nextCursor : null;
        this.oldestId = firstEntry(last.entries)?.id ?? null;
      }
      const cursor = this.olderCursor;
      const page: TranscriptPage | undefined = cursor
        ? await daemon.request('claude/getTranscript', { channelId, before: cursor, limit })
        : undefined;
      if (stale()) return { loaded: 0, hasMore: this.state.older.more };
      const entries = page?.entries ?? [];
      const hasMore = page?.hasMore === true && typeof page.nextCursor === 'string';
      const beforeId = this.oldestId;
      this.olderCursor = hasMore ? page.nextCursor : null;
      this.oldestId = firstEntry(entries)?.id ?? beforeId;
      this.apply({ kind: 'olderPage', entries, beforeId, hasOlder: hasMore });
      return { loaded: entries.length, hasMore };
    } catch (e) {
      if (stale()) return { loaded: 0, hasMore: this.state.older.more };
      // A cursor the daemon refuses stays refused: the chat shows what it has.
      this.olderCursor = null;
      this.apply({ kind: 'olderPage', entries: [], beforeId: null, hasOlder: false });
      this.apply({
        kind: 'notice',
        level: 'error',
        text: `Could not show the earlier messages: ${(e as Error).message}`,
      });
      return { loaded: 0, hasMore: false };
    }
  }

  /** Takes the channel's state, model and mode from its claude/listChannels item (an attach
   * answer does not carry them, and the next claude/status may be a long turn away). */
  applySummary(channel: ChannelSummary): void {
    if (channel.channelId !== this.channelId || !this.sessionId) return;
    const status: StatusNotification = {
      channelId: channel.channelId,
      seq: this.channelSeq,
      state: channel.state,
      sessionId: this.sessionId,
      ...(channel.model ? { model: channel.model } : {}),
      ...(channel.permissionMode ? { permissionMode: channel.permissionMode } : {}),
    };
    this.status = status;
    // Applied, not routed: it is no notification of the channel and must not move `seq`.
    this.apply({ kind: 'notification', method: 'claude/status', params: status });
  }

  /** Shared daemon: the connection dropped (`true`) or the chat is attached again (`false`). */
  setReconnecting(reconnecting: boolean): void {
    if (reconnecting === this.reconnecting) return;
    this.reconnecting = reconnecting;
    this.apply({ kind: 'connection', reconnecting });
  }

  /** Keeps the channel's notifications from now until `release` (a claude/attach is on its way). */
  hold(): void {
    this.held ??= [];
  }

  /** Applies the notifications kept since `hold` (those the chat has already are skipped). */
  release(): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const [method, params] of held) this.notify(method, params);
  }

  /** Routes a notification of this chat's channel. */
  notify<M extends keyof ChannelNotifications>(method: M, channelParams: ChannelNotifications[M]): void {
    if (this.held) {
      this.held.push([method, channelParams]);
      return;
    }
    // Shared daemon: a notification the chat already applied (replayed after a reconnect, or
    // sent before an attach answer that already holds it) is not applied twice.
    if (channelParams.seq <= this.channelSeq) return;
    // A channel counts its notifications from 1; a chat that moved to a new channel (a daemon
    // restart) goes on counting from where the old one stopped, so `seq` names one
    // notification of the chat (file updates are opened by it).
    const params = this.seqOffset === 0 ? channelParams : { ...channelParams, seq: channelParams.seq + this.seqOffset };
    this.lastSeq = Math.max(this.lastSeq, params.seq);
    const missed = channelParams.seq - this.channelSeq - 1;
    let answeredElsewhere: string | undefined;
    this.channelSeq = Math.max(this.channelSeq, channelParams.seq);
    if (method === 'claude/permissionRequest') {
      const request = params as PermissionRequestNotification;
      if (request.autoDecision !== 'allow') this.permissionRequests.set(request.requestId, request);
    } else if (method === 'claude/permissionCancelled') {
      const { requestId, reason } = params as ClaudeNotifications['claude/permissionCancelled'];
      const request = this.permissionRequests.get(requestId);
      this.permissionRequests.delete(requestId);
      // Every attached client hears of the first answer, the one that gave it too.
      if (reason === 'answeredElsewhere' && request && !this.answered.delete(requestId)) {
        answeredElsewhere = request.displayName || request.toolName;
      }
    } else if (method === 'claude/fileUpdated') {
      this.keepFileContents(params as FileUpdatedNotification);
    } else if (method === 'claude/status') {
      this.status = params as StatusNotification;
      this.sessionId = this.status.sessionId;
    } else if (method === 'claude/turnEnded') {
      this.totalCostUsd = (params as ClaudeNotifications['claude/turnEnded']).totalCostUsd;
    }
    // The event carries no file contents: they can be megabytes, and the state is cloned to the webview.
    const slim =
      method === 'claude/fileUpdated'
        ? ({ ...(params as FileUpdatedNotification), oldContent: null, newContent: null } as ClaudeNotifications[M])
        : params;
    this.apply({ kind: 'notification', method, params: slim } as ChatEvent);
    if (answeredElsewhere) {
      this.apply({ kind: 'notice', level: 'info', text: `${answeredElsewhere}: answered in another editor.` });
    }
    if (missed > 0) void this.catchUp(missed);
  }

  /**
   * Takes the channel's entries from the daemon (claude/getTranscript): what a resumed or
   * forked channel starts with, which no claude/entry sends; when the daemon pages, only the
   * last page (the rest is read as the user scrolls up: loadOlder). The answer follows every
   * notification applied so far, so the entries are current when they are applied.
   */
  async loadTranscript(): Promise<void> {
    const channelId = this.requireChannel();
    const limit = this.pageLimit();
    const transcript = await (
      await this.daemon()
    ).request('claude/getTranscript', limit ? { channelId, limit } : { channelId });
    if (channelId !== this.channelId) return;
    const stored = this.storedPage;
    this.storedPage = undefined;
    if (stored && stored.hasMore === transcript.hasMore && sameJson(stored.entries, transcript.entries)) {
      // The page shows these very entries (read from the session file while the CLI
      // started): nothing is drawn again, only the cursor becomes the channel's.
      this.takeCursor(transcript.entries, transcript);
      return;
    }
    if (stored) {
      // The session changed meanwhile: the channel's page replaces the stored one.
      this.applySnapshot({ ...transcript, seq: this.channelSeq, pendingPermissions: this.pendingNow() });
      return;
    }
    const hasOlder = this.takeCursor(transcript.entries, transcript);
    this.apply({ kind: 'transcript', entries: transcript.entries, hasOlder });
  }

  /**
   * Some of the channel's notifications never came (a gap in `seq`): takes its entries anew.
   * When the daemon pages, the last page and as many entries again as notifications were
   * missed (each adds one entry at most): the pages read above stay as they are.
   */
  private async catchUp(missed: number): Promise<void> {
    const channelId = this.channelId;
    const limit = this.pageLimit();
    try {
      if (!limit || !channelId) {
        await this.loadTranscript();
        return;
      }
      const page = await (await this.daemon()).request('claude/getTranscript', { channelId, limit: limit + missed });
      if (channelId === this.channelId) this.apply({ kind: 'transcript', entries: page.entries });
    } catch {
      // The channel is gone (closed, or its daemon died): a new one starts its own count.
    }
  }

  /** Sends a user message; resolves with its id once the daemon queued it. A message sent
   * while the chat's channel opens is shown at once, waiting, and sent once it is open. */
  async send(text: string, images: ImageBlock[] = []): Promise<string> {
    // Its id is the client's, given to the daemon as the message's uuid: the daemon's entry
    // for it then replaces the one shown (the same id) instead of adding a second.
    const waitingId = this.opening ? randomUUID() : undefined;
    if (waitingId) {
      this.apply({ kind: 'waiting', id: waitingId, text, ...(images.length ? { imageCount: images.length } : {}) });
    }
    try {
      if (this.opening) await this.opening;
      const channelId = this.requireChannel();
      const content: (TextBlock | ImageBlock)[] | undefined = images.length
        ? [...images, { type: 'text', text }]
        : undefined;
      const params: SendMessageParams = content ? { channelId, content } : { channelId, text };
      if (waitingId) params.uuid = waitingId;
      const daemon = await this.daemon();
      const { messageId } = await daemon.request('claude/sendMessage', params);
      this.hasConversation = true;
      return messageId;
    } catch (e) {
      // Not left "waiting": the user sees it did not go.
      if (waitingId) this.apply({ kind: 'notSent', id: waitingId });
      throw e;
    }
  }

  async interrupt(): Promise<void> {
    const channelId = this.requireChannel();
    await (await this.daemon()).request('claude/interrupt', { channelId });
  }

  /** Answers a pending permission request. */
  async respondPermission(answer: Omit<RespondPermissionParams, 'channelId'>): Promise<void> {
    const channelId = this.requireChannel();
    this.answered.add(answer.requestId);
    try {
      await (await this.daemon()).request('claude/respondPermission', { ...answer, channelId });
    } catch (e) {
      this.answered.delete(answer.requestId);
      throw e;
    }
    this.permissionRequests.delete(answer.requestId);
  }

  /** Switches the model (null: the default) and, when given, the effort. */
  async setModel(model: string | null, effort?: SetModelParams['effort']): Promise<void> {
    const channelId = this.requireChannel();
    await (
      await this.daemon()
    ).request('claude/setModel', effort ? { channelId, model, effort } : { channelId, model });
    await this.refreshInfo(channelId);
  }

  async setPermissionMode(mode: SetPermissionModeParams['mode']): Promise<void> {
    const channelId = this.requireChannel();
    await (await this.daemon()).request('claude/setPermissionMode', { channelId, mode });
    await this.refreshInfo(channelId);
  }

  /** Takes the channel's info anew: no notification carries the effort, and a reloaded
   * window resumes the chat with the model and effort its page kept from it. */
  private async refreshInfo(channelId: string): Promise<void> {
    const info = await (await this.daemon()).request('claude/channelInfo', { channelId });
    if (channelId !== this.channelId) return;
    this.info = info;
    this.infoEmitter.fire(info);
  }

  /** Restores files to how they were before `messageId` (a dry run only reports). */
  async rewind(messageId: string, dryRun: boolean): Promise<RewindFilesResult> {
    const channelId = this.requireChannel();
    return (await this.daemon()).request('claude/rewindFiles', { channelId, messageId, dryRun });
  }

  async contextUsage(): Promise<ContextUsageResult> {
    const channelId = this.requireChannel();
    return (await this.daemon()).request('claude/contextUsage', { channelId });
  }

  /**
   * Closes the channel (its CLI ends); the chat stays readable but takes no more messages.
   * `keepRunning` (shared daemon): the chat goes on in the daemon without this client
   * (claude/detach), where "Attach to a Running Chat" finds it.
   */
  async close(keepRunning = false): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.keptRunning = keepRunning;
    await this.onClose(this, keepRunning);
    this.closedEmitter.fire();
  }

  private requireChannel(): string {
    if (this.closed) throw new SidecarError('this chat is closed: open a new one', 'chat');
    if (!this.channelId) {
      throw new SidecarError(
        'this chat is waiting for the daemon (it is starting or restarting): try again in a moment',
        'chat',
      );
    }
    return this.channelId;
  }

  private keepFileContents(update: FileUpdatedNotification): void {
    this.fileContents.set(update.seq, {
      path: update.path,
      oldContent: update.oldContent,
      newContent: update.newContent,
    });
    if (this.fileContents.size > KEPT_FILE_UPDATES) {
      const oldest = this.fileContents.keys().next().value;
      if (oldest !== undefined) this.fileContents.delete(oldest);
    }
  }
}
