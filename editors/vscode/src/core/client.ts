// The client of one daemon for the whole editor window: starts it when first needed,
// routes its notifications to chats, serves its editor-tool requests, and when it dies
// starts a new one and moves every chat onto it (same session, new channel).
//
// With the shared daemon (`claude-sidecar connect`) the chats belong to the daemon, not to
// the connection: when the connection drops, the client makes it again (bounded backoff)
// and re-attaches every chat with the last `seq` it applied, so it gets exactly what it
// missed; requests made meanwhile wait for the connection.

import { Emitter, type Event } from 'vscode-jsonrpc/node';
import { Chat } from './chat';
import type { ChannelNotifications } from './chat-state';
import { DaemonConnection, type DaemonExit, type DaemonOptions, type Log } from './connection';
import { SidecarError, toSidecarError } from './errors';
import { daemonFeatures, featureMissing, ignoredOptionsWarning, ProtocolMismatchError } from './handshake';
import type {
  AttachResult,
  ChannelInfo,
  ChannelsChangedNotification,
  ChannelSummary,
  ClaudeNotifications,
  InitializationOptions,
  NewChannelParams,
  SessionPage,
  SessionsChangedNotification,
  SessionSummary,
} from './protocol.generated';

/** Notifications kept per channel that no chat holds yet (its first ones, before newChannel answers). */
const EARLY_NOTIFICATIONS_KEPT = 50;

/** The daemon's life as the client sees it; every change is logged and emitted.
 * `reconnecting`: the shared daemon's connection dropped and is being made again. */
export type DaemonState = 'stopped' | 'starting' | 'running' | 'restarting' | 'reconnecting' | 'failed';

/** Entries per page of a long conversation, unless ClientOptions.pageEntries says otherwise. */
export const DEFAULT_PAGE_ENTRIES = 100;

/** Shared daemon: tries in a row to connect again before the client gives up. */
const RECONNECT_TRIES = 8;

/** Shared daemon: the wait before the `attempt`th try to connect again (0.25 s doubling to 8 s). */
export function reconnectDelayMs(attempt: number): number {
  return Math.min(250 * 2 ** (attempt - 1), 8000);
}

/** An editor tool: returns its result or a promise of it; a throw or a rejection is the tool's error. */
export type EditorToolHandler = (args: Record<string, unknown>, chat: Chat | undefined) => unknown;

export interface ClientOptions {
  command: string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  initializationOptions?: InitializationOptions;
  /** Implementations of the editor tools declared in `initializationOptions.editorTools`. */
  editorTools?: Record<string, EditorToolHandler>;
  log?: Log;
  /** Restarts allowed within `restartWindowMs` before the client gives up (state `failed`). */
  maxRestarts?: number;
  restartWindowMs?: number;
  /**
   * The command reaches the shared daemon (`claude-sidecar connect`): chats outlive the
   * connection, a dropped one is made again and every chat re-attached, a closed panel may
   * leave its chat running.
   */
  shared?: boolean;
  /**
   * Entries per page of a long conversation, when the daemon serves paging (feature
   * transcriptPaging): a chat opens at its last page and reads older ones as the user scrolls
   * up. Default 100; 0 reads every entry at once (as with a daemon without paging).
   */
  pageEntries?: number;
  /** Shared daemon: tries in a row to connect again (default 8) and the wait before each. */
  reconnectTries?: number;
  reconnectDelayMs?: (attempt: number) => number;
}

/** Injected so tests can count or fail daemon starts. */
export type DaemonStarter = (options: DaemonOptions) => Promise<DaemonConnection>;

export class SidecarClient {
  private readonly stateEmitter = new Emitter<DaemonState>();
  readonly onDaemonState: Event<DaemonState> = this.stateEmitter.event;
  private readonly chatEmitter = new Emitter<Chat>();
  /** A chat was opened (new, resumed or forked). */
  readonly onChatOpened: Event<Chat> = this.chatEmitter.event;
  private readonly sessionsEmitter = new Emitter<SessionsChangedNotification>();
  /** Sessions a listing gave as `partial` have been read whole (claude/sessionsChanged): list
   * their folder again for exact figures. */
  readonly onSessionsChanged: Event<SessionsChangedNotification> = this.sessionsEmitter.event;
  private readonly channelsEmitter = new Emitter<ChannelsChangedNotification>();
  /** Chats of the daemon started, changed or ended (claude/channelsChanged, sent after a
   * claude/watchChannels of this connection). */
  readonly onChannelsChanged: Event<ChannelsChangedNotification> = this.channelsEmitter.event;

  private current: DaemonConnection | undefined;
  private starting: Promise<DaemonConnection> | undefined;
  private readonly chats = new Map<string, Chat>();
  private closedChannels = new Set<string>();
  private early = new Map<string, [keyof ChannelNotifications, unknown][]>();
  private nextChat = 1;
  private restarts: number[] = [];
  private disposed = false;
  state: DaemonState = 'stopped';
  lastExit: DaemonExit | undefined;
  /** Why the daemon could not be started or reached last (state `failed`), e.g. a ProtocolMismatchError. */
  lastFailure: SidecarError | undefined;
  /** The optional features the daemon connected last serves (its `initialize` answer); undefined before one answered. */
  features: ReadonlySet<string> | undefined;
  /** The ignored-options warnings logged already: each once per client, not per reconnect. */
  private readonly warned = new Set<string>();

  constructor(
    private readonly options: ClientOptions,
    private readonly startDaemon: DaemonStarter = (options) => DaemonConnection.start(options),
  ) {}

  /** Whether the client runs on the shared daemon. */
  get shared(): boolean {
    return this.options.shared ?? false;
  }

  /** The running daemon, started (or restarted after a failure) when needed. With the shared
   * daemon and chats open, a new connection re-attaches them before it is handed out. */
  daemon(): Promise<DaemonConnection> {
    if (this.current?.alive) return Promise.resolve(this.current);
    if (this.disposed) return Promise.reject(new SidecarError('the extension is shutting down', 'daemon'));
    const reattach = this.shared && this.allChats().some((c) => c.channelId);
    // After the client gave up reconnecting, a request tries once more, at once.
    this.starting ??= (reattach ? this.reconnect(1, false) : this.start()).finally(() => (this.starting = undefined));
    return this.starting;
  }

  /** Opens a new chat (a new channel: a new session, or `params.resume`). */
  async openChat(params: NewChannelParams): Promise<Chat> {
    const chat = new Chat(
      `chat-${this.nextChat++}`,
      { ...params },
      () => this.daemon(),
      (c, keepRunning) => this.closeChat(c, keepRunning),
      () => this.pageLimit(),
    );
    if (params.resume) chat.hasConversation = true;
    await this.bindChannel(chat, params, await this.daemon());
    this.chats.set(chat.id, chat);
    this.chatEmitter.fire(chat);
    return chat;
  }

  /**
   * Resumes a stored session in a new chat, which shows the conversation so far. When the
   * daemon pages, the session's last page is read from its file (claude/getHistory, sent
   * with the newChannel) while the CLI starts, which takes seconds for a long session: the
   * chat shows it at once and is handed to `onStored` before the channel is open. Messages
   * sent meanwhile go once it is. Resolves once the channel serves the chat.
   */
  async resumeChat(
    cwd: string,
    sessionId: string,
    params: Partial<NewChannelParams> = {},
    onStored?: (chat: Chat) => void,
  ): Promise<Chat> {
    const chat = new Chat(
      `chat-${this.nextChat++}`,
      { ...params, cwd, resume: sessionId },
      () => this.daemon(),
      (c, keepRunning) => this.closeChat(c, keepRunning),
      () => this.pageLimit(),
    );
    chat.hasConversation = true;
    chat.sessionId = sessionId;
    const daemon = await this.daemon();
    const limit = this.pageLimit();
    if (limit) {
      void daemon.request('claude/getHistory', { sessionId, cwd, limit }).then(
        (page) => {
          // Only while the channel is on its way: once open, its own page is the chat's.
          if (chat.channelId || chat.closed) return;
          chat.showStored(page);
          try {
            onStored?.(chat);
          } catch (e) {
            this.options.log?.('warn', `showing the stored last page of ${sessionId}: ${(e as Error).message}`);
          }
        },
        (e: unknown) => this.options.log?.('info', `the stored last page of ${sessionId}: ${(e as Error).message}`),
      );
    }
    const opening = this.openResumed(chat, daemon);
    chat.opensWith(opening);
    await opening;
    if (!chat.closed) this.chatEmitter.fire(chat);
    return chat;
  }

  /** Opens the resumed chat's channel and takes its conversation so far (see resumeChat). */
  private async openResumed(chat: Chat, daemon: DaemonConnection): Promise<void> {
    const attached = await this.bindChannel(chat, chat.channelParams, daemon);
    if (chat.closed) {
      // Its tab was closed while the channel opened: the channel goes too.
      await this.closeChat(chat, chat.keptRunning);
      return;
    }
    // Routed to from now on: a message sent while it opened goes once it is open.
    this.chats.set(chat.id, chat);
    if (attached) {
      // The answer had the conversation (a long one's last page: bindChannel's `limit`).
      chat.apply({
        kind: 'notice',
        level: 'info',
        text: 'This session was still running in the daemon: attached to it.',
      });
    } else {
      // A resumed channel starts with the stored session's entries, served by its transcript.
      await chat.loadTranscript();
    }
  }

  /**
   * Forks a chat into a new one (a new session holding the conversation up to
   * `atMessageId`, or all of it); the new chat shows the conversation it holds.
   */
  async forkChat(chat: Chat, atMessageId?: string): Promise<Chat> {
    if (!chat.channelId) throw new SidecarError('this chat has no channel yet', 'claude/forkSession');
    const daemon = await this.daemon();
    if (daemon.initializeResult && !daemonFeatures(daemon.initializeResult).has('fork')) {
      throw featureMissing('fork', 'Forking a chat', daemon.initializeResult);
    }
    const result = await daemon.request('claude/forkSession', {
      channelId: chat.channelId,
      ...(atMessageId ? { atMessageId } : {}),
    });
    const fork = new Chat(
      `chat-${this.nextChat++}`,
      { ...chat.reopenParams(), resume: result.sessionId },
      () => this.daemon(),
      (c, keepRunning) => this.closeChat(c, keepRunning),
      () => this.pageLimit(),
    );
    fork.hasConversation = true;
    this.bound(fork, result.channelId, result.sessionId, result.info, result.pid);
    // The fork's channel starts with the source's entries, cut by the daemon at atMessageId.
    await fork.loadTranscript();
    this.chats.set(fork.id, fork);
    this.chatEmitter.fire(fork);
    return fork;
  }

  /** Shared daemon: every chat the daemon runs, with the editors attached to each. */
  async listChannels(): Promise<ChannelSummary[]> {
    return (await (await this.daemon()).request('claude/listChannels', {})).channels;
  }

  /**
   * Shared daemon: opens a chat the daemon runs (a `listChannels` item) in a new chat: its
   * conversation so far and its pending permission requests, then what it does next. A
   * chat this client shows already is returned as it is. Over the private daemon it
   * rejects with `notShared`, saying what to set.
   */
  async attachChat(channel: ChannelSummary): Promise<Chat> {
    // The private daemon is asked all the same: its refusal (notShared) is the answer.
    const open = this.allChats().find((c) => c.channelId === channel.channelId && c.sessionId === channel.sessionId);
    if (open && this.shared) return open;
    const chat = new Chat(
      `chat-${this.nextChat++}`,
      {
        cwd: channel.cwd,
        ...(channel.model ? { model: channel.model } : {}),
        ...(channel.permissionMode
          ? { permissionMode: channel.permissionMode as NewChannelParams['permissionMode'] }
          : {}),
      },
      () => this.daemon(),
      (c, keepRunning) => this.closeChat(c, keepRunning),
      () => this.pageLimit(),
    );
    chat.hasConversation = true;
    const daemon = await this.daemon();
    // The private daemon's refusal (notShared) says more than a missing feature would.
    if (this.shared && daemon.initializeResult && !daemonFeatures(daemon.initializeResult).has('attach')) {
      throw featureMissing('attach', 'Attaching to a running chat', daemon.initializeResult);
    }
    this.closedChannels.delete(channel.channelId);
    let result: AttachResult;
    try {
      result = await daemon.request('claude/attach', { channelId: channel.channelId, ...this.limitParam() });
    } catch (e) {
      const error = toSidecarError(e, 'claude/attach');
      if (error.errorName !== 'notShared') throw error;
      throw new SidecarError(
        'attaching to a running chat needs the shared daemon: set claudeSidecar.daemon to "shared"',
        'claudeSidecar.daemon',
        { cause: error, code: error.code, errorName: error.errorName },
      );
    }
    this.bound(chat, result.channelId, result.sessionId, result.info, result.pid, result);
    // The item may be older than the attach (a quick pick stays open): its state is asked anew.
    await this.refreshSummary(chat, daemon);
    chat.apply({ kind: 'notice', level: 'info', text: 'Attached: the chat goes on from here.', beforeTurn: true });
    this.chats.set(chat.id, chat);
    this.chatEmitter.fire(chat);
    return chat;
  }

  /** Ends a chat of the daemon (its CLI), shown in this client or not: claude/closeChannel. */
  async closeChannel(channelId: string): Promise<void> {
    await (await this.daemon()).request('claude/closeChannel', { channelId });
  }

  /**
   * Stored sessions of a workspace folder, newest first (all pages). A daemon that serves
   * `partialListing` answers at once: a long session it has not read whole yet comes with
   * `partial: true` (no exact `messageCount`), and `onSessionsChanged` fires once it has.
   */
  async listSessions(cwd: string, limit = 200): Promise<SessionSummary[]> {
    const daemon = await this.daemon();
    const partial = this.features?.has('partialListing') ? { allowPartial: true } : {};
    const sessions: SessionSummary[] = [];
    let cursor: string | null = null;
    do {
      const page: SessionPage = await daemon.request('claude/listSessions', {
        cwd,
        limit: Math.min(limit, 100),
        cursor,
        ...partial,
      });
      sessions.push(...page.sessions);
      cursor = page.nextCursor;
    } while (cursor && sessions.length < limit);
    return sessions;
  }

  chat(id: string): Chat | undefined {
    return this.chats.get(id);
  }

  /** The open chats, oldest first. */
  allChats(): Chat[] {
    return [...this.chats.values()];
  }

  /** Closes every chat and ends the daemon; no CLI outlives it. */
  async dispose(): Promise<void> {
    this.disposed = true;
    // A reconnect in progress ends the connection it makes once it sees the client disposed.
    const daemon =
      this.current ?? (this.state === 'reconnecting' ? undefined : await this.starting?.catch(() => undefined));
    this.current = undefined;
    await daemon?.dispose();
    this.setState('stopped');
  }

  private async start(): Promise<DaemonConnection> {
    this.setState(this.state === 'stopped' ? 'starting' : 'restarting');
    try {
      const daemon = await this.connect();
      this.current = daemon;
      this.lastFailure = undefined;
      this.setState('running');
      return daemon;
    } catch (e) {
      this.lastFailure = toSidecarError(e, 'daemon');
      this.setState('failed');
      throw e;
    }
  }

  /** Starts the daemon command and wires the connection to the chats (not yet `current`). */
  private async connect(): Promise<DaemonConnection> {
    const daemon = await this.startDaemon({
      command: this.options.command,
      cwd: this.options.cwd,
      env: this.options.env,
      initializationOptions: this.options.initializationOptions ?? {},
      log: this.options.log,
    });
    this.handshake(daemon);
    daemon.onNotification((method, params) => this.route(method, params));
    daemon.onClientRequest('claude/callEditorTool', (params) => this.callEditorTool(params));
    daemon.onExit((exit) => this.daemonExited(daemon, exit));
    // Channel ids are per daemon: a new one starts counting again.
    this.early = new Map();
    this.closedChannels = new Set();
    return daemon;
  }

  /**
   * Shared daemon: makes the connection again, up to `tries` times in a row, the first after
   * a wait only if `wait`, each next one after a longer one (reconnectDelayMs), and
   * re-attaches every chat before the connection is handed to the requests that wait for
   * it. After the last try the client gives up (`failed`) and the chats say so; the next
   * request tries once more.
   */
  private async reconnect(tries: number, wait: boolean): Promise<DaemonConnection> {
    this.setState('reconnecting');
    const delay = this.options.reconnectDelayMs ?? reconnectDelayMs;
    let failure: unknown;
    for (let attempt = 1; attempt <= tries; attempt++) {
      if (wait || attempt > 1) await new Promise((resolve) => setTimeout(resolve, delay(attempt)));
      if (this.disposed) throw new SidecarError('the extension is shutting down', 'daemon');
      this.options.log?.('info', `connecting to the shared daemon again (try ${attempt} of ${tries})`);
      let daemon: DaemonConnection;
      try {
        daemon = await this.connect();
      } catch (e) {
        failure = e;
        this.options.log?.('info', `connecting again failed: ${(e as Error).message}`);
        // The daemon there now does not fit this client: trying again cannot help.
        if (e instanceof ProtocolMismatchError) {
          tries = attempt;
          break;
        }
        continue;
      }
      // Not `current` until every chat is attached again: requests wait until then.
      await Promise.all(this.allChats().map((chat) => this.reattach(chat, daemon)));
      if (this.isDisposed()) {
        await daemon.dispose();
        throw new SidecarError('the extension is shutting down', 'daemon');
      }
      if (!daemon.alive) continue; // it dropped again meanwhile
      this.current = daemon;
      this.lastFailure = undefined;
      this.setState('running');
      this.options.log?.('info', 'connected to the shared daemon again');
      return daemon;
    }
    this.lastFailure = toSidecarError(failure ?? new Error('the connection dropped'), 'daemon');
    this.setState('failed');
    const why = failure instanceof Error ? `: ${failure.message}` : '';
    for (const chat of this.allChats()) {
      chat.setReconnecting(false);
      chat.apply({
        kind: 'notice',
        level: 'error',
        text: `Could not connect to the shared daemon again (${tries} tries)${why}. Send a message to try again.`,
      });
    }
    throw toSidecarError(failure ?? new Error('the connection dropped'), 'daemon');
  }

  /**
   * Shared daemon, on a new connection: attaches the chat again with the last `seq` it
   * applied, so the daemon sends exactly what it missed. If the daemon no longer kept all
   * of it (`missed`), the chat is shown afresh from the answer; if the chat is not in the
   * daemon any more (a new daemon runs), its session is opened again.
   */
  private async reattach(chat: Chat, daemon: DaemonConnection): Promise<void> {
    const channelId = chat.channelId;
    if (!channelId || chat.closed) return;
    // The replayed notifications come before the answer, live ones may too: kept until it
    // is known whether the answer's entries replace the chat.
    chat.hold();
    let result: AttachResult;
    try {
      // Missed notifications the daemon no longer kept: the answer's entries, a page of them.
      result = await daemon.request('claude/attach', { channelId, afterSeq: chat.seq, ...this.limitParam() });
    } catch (e) {
      const error = toSidecarError(e, 'claude/attach');
      if (!daemon.alive) return; // dropped again: the next connection attaches it again
      // invalidParams: an afterSeq past the chat's last seq, a chat of the same id in a new daemon.
      if (error.errorName === 'channelNotFound' || error.errorName === 'invalidParams') {
        return this.reopen(chat, daemon, 'The chat was not running in the daemon any more');
      }
      chat.release();
      chat.setReconnecting(false);
      chat.apply({ kind: 'notice', level: 'error', text: `Could not attach to the chat again: ${error.message}` });
      return;
    }
    if (result.sessionId !== chat.sessionId) {
      // A new daemon gave the id to another chat.
      await daemon.request('claude/detach', { channelId }).catch(() => undefined);
      return this.reopen(chat, daemon, 'The chat was not running in the daemon any more');
    }
    chat.pid = result.pid;
    if (result.missed) chat.applySnapshot(result);
    chat.release();
    chat.setReconnecting(false);
    if (result.missed) {
      chat.apply({
        kind: 'notice',
        level: 'warn',
        text: 'Reconnected: the daemon no longer had all of what was missed, so the chat is shown afresh.',
      });
      await this.refreshSummary(chat, daemon);
    } else {
      chat.apply({ kind: 'notice', level: 'info', text: 'Reconnected to the shared daemon.' });
    }
  }

  /** The chat's channel is gone from the daemon: opens its session again (or a new one). */
  private async reopen(chat: Chat, daemon: DaemonConnection, why: string): Promise<void> {
    chat.unbind();
    chat.setReconnecting(false);
    const params = chat.reopenParams();
    if (chat.hasConversation && chat.sessionId) params.resume = chat.sessionId;
    else delete params.resume;
    chat.apply({
      kind: 'notice',
      level: 'warn',
      text: params.resume ? `${why}: opening its session again.` : `${why}: starting it anew.`,
    });
    try {
      await this.bindChannel(chat, params, daemon);
      chat.apply({
        kind: 'notice',
        level: 'info',
        text: params.resume ? 'Reopened from its session: the conversation goes on.' : 'Ready again.',
      });
    } catch (e) {
      chat.apply({ kind: 'notice', level: 'error', text: `Cannot reopen this chat: ${(e as Error).message}` });
    }
  }

  /** Takes the chat's state, model and mode from claude/listChannels (an attach answer lacks them). */
  private async refreshSummary(chat: Chat, daemon: DaemonConnection): Promise<void> {
    try {
      const { channels } = await daemon.request('claude/listChannels', {});
      const channel = channels.find((c) => c.channelId === chat.channelId);
      if (channel) chat.applySummary(channel);
    } catch (e) {
      this.options.log?.('debug', `listChannels: ${(e as Error).message}`);
    }
  }

  private route<M extends keyof ClaudeNotifications>(method: M, params: ClaudeNotifications[M]): void {
    if (method === 'claude/sessionsChanged') {
      this.sessionsEmitter.fire(params as SessionsChangedNotification);
      return;
    }
    if (method === 'claude/channelsChanged') {
      this.channelsEmitter.fire(params as ChannelsChangedNotification);
      return;
    }
    this.routeToChat(method, params as ChannelNotifications[keyof ChannelNotifications]);
  }

  private routeToChat<M extends keyof ChannelNotifications>(method: M, params: ChannelNotifications[M]): void {
    const channelId = (params as { channelId?: string }).channelId;
    for (const chat of this.chats.values()) {
      if (chat.channelId === channelId) {
        chat.notify(method, params);
        return;
      }
    }
    // A channel's first notifications (its `idle` status) come before newChannel answers:
    // keep them until the chat is bound to it.
    if (!channelId || this.closedChannels.has(channelId)) return;
    const early = this.early.get(channelId) ?? [];
    if (early.length < EARLY_NOTIFICATIONS_KEPT) early.push([method, params]);
    this.early.set(channelId, early);
  }

  private async callEditorTool(params: { tool: string; arguments: Record<string, unknown>; channelId: string }) {
    const handler = this.options.editorTools?.[params.tool];
    if (!handler) throw new SidecarError(`this editor has no tool named ${params.tool}`, 'claude/callEditorTool');
    const chat = [...this.chats.values()].find((c) => c.channelId === params.channelId);
    // A handler may throw or return a value: awaited here, either is this call's answer.
    return await handler(params.arguments, chat);
  }

  /** Opens a channel for the chat; true when the shared daemon attached it to the running
   * chat that holds `params.resume` (its conversation is shown from the answer). */
  private async bindChannel(chat: Chat, params: NewChannelParams, daemon: DaemonConnection): Promise<boolean> {
    // A resume that joins a running chat answers with its last page (the newChannel's `limit`).
    const asked = params.resume ? { ...params, ...this.limitParam() } : params;
    const result = await daemon.request('claude/newChannel', asked);
    this.bound(chat, result.channelId, result.sessionId, result.info, result.pid, result.attached ?? undefined);
    if (result.attached) await this.refreshSummary(chat, daemon);
    return Boolean(result.attached);
  }

  /** Binds the chat to a channel; `snapshot`: the conversation the chat starts from (an attach). */
  private bound(
    chat: Chat,
    channelId: string,
    sessionId: string,
    info: ChannelInfo | null,
    pid?: number,
    snapshot?: AttachResult,
  ): void {
    chat.bind(channelId, sessionId, info, pid);
    if (snapshot) chat.applySnapshot(snapshot);
    const early = this.early.get(channelId) ?? [];
    this.early.delete(channelId);
    for (const [method, params] of early) chat.notify(method, params as never);
  }

  /** Ends the chat's channel, or (shared daemon, `keepRunning`) detaches from it: the chat
   * goes on in the daemon, listed by listChannels for any client to attach to. */
  private async closeChat(chat: Chat, keepRunning: boolean): Promise<void> {
    this.chats.delete(chat.id);
    const channelId = chat.channelId;
    if (channelId) this.closedChannels.add(channelId);
    if (!channelId || !this.current?.alive) return;
    const detach = keepRunning && this.shared;
    try {
      if (detach) await this.current.request('claude/detach', { channelId });
      else await this.current.request('claude/closeChannel', { channelId });
    } catch (e) {
      this.options.log?.('warn', `${detach ? 'detaching from' : 'closing'} ${channelId}: ${(e as Error).message}`);
    }
  }

  private daemonExited(daemon: DaemonConnection, exit: DaemonExit): void {
    if (daemon !== this.current) return;
    this.current = undefined;
    this.lastExit = exit;
    if (this.shared && !exit.expected && !this.disposed) {
      this.connectionDropped(exit);
      return;
    }
    for (const chat of this.chats.values()) chat.unbind();
    if (exit.expected || this.disposed) {
      this.setState('stopped');
      return;
    }
    const now = Date.now();
    const window = this.options.restartWindowMs ?? 60_000;
    this.restarts = this.restarts.filter((t) => now - t < window);
    const why =
      `the daemon stopped (code ${exit.code}, signal ${exit.signal})` +
      (exit.stderrTail.length ? `: ${exit.stderrTail.slice(-2).join(' | ')}` : '');
    if (this.restarts.length >= (this.options.maxRestarts ?? 3)) {
      this.setState('failed');
      for (const chat of this.chats.values()) {
        chat.apply({
          kind: 'notice',
          level: 'error',
          text: `${why}. It stopped too often; send a message to try again.`,
        });
      }
      return;
    }
    this.restarts.push(now);
    void this.moveChats(why);
  }

  /**
   * Shared daemon: the connection (`connect`, `ssh`) ended; the chats run on in the daemon.
   * With chats open it is made again at once (their re-attach waits for it); without, the
   * next request makes it.
   */
  private connectionDropped(exit: DaemonExit): void {
    const open = this.allChats().filter((c) => c.channelId);
    if (open.length === 0) {
      this.setState('stopped');
      return;
    }
    this.options.log?.(
      'warn',
      `the connection to the shared daemon dropped (code ${exit.code}, signal ${exit.signal})`,
    );
    for (const chat of open) chat.setReconnecting(true);
    if (this.starting) return; // a reconnect in progress tries again
    this.starting = this.reconnect(this.options.reconnectTries ?? RECONNECT_TRIES, true).finally(
      () => (this.starting = undefined),
    );
    // Its failure is reported to the chats; nobody else waits for it yet.
    this.starting.catch(() => undefined);
  }

  /** Starts a new daemon and gives every chat a channel on it, resuming its session. */
  private async moveChats(why: string): Promise<void> {
    for (const chat of this.chats.values()) {
      chat.apply({ kind: 'notice', level: 'warn', text: `${why}; restarting it.` });
    }
    try {
      await this.daemon();
    } catch (e) {
      for (const chat of this.chats.values()) {
        chat.apply({ kind: 'notice', level: 'error', text: `cannot restart the daemon: ${(e as Error).message}` });
      }
      return;
    }
    for (const chat of this.chats.values()) {
      const params = chat.reopenParams();
      if (chat.hasConversation && chat.sessionId) params.resume = chat.sessionId;
      else delete params.resume;
      try {
        await this.bindChannel(chat, params, await this.daemon());
        chat.apply({
          kind: 'notice',
          level: 'info',
          text: chat.hasConversation ? 'Resumed the conversation.' : 'Ready again.',
        });
      } catch (e) {
        chat.apply({ kind: 'notice', level: 'error', text: `cannot resume this chat: ${(e as Error).message}` });
      }
    }
  }

  /** Takes what the daemon's `initialize` answer says about this connection: its features,
   * and the options it ignored (logged once, at warning). */
  private handshake(daemon: DaemonConnection): void {
    const result = daemon.initializeResult;
    if (!result) return;
    this.features = daemonFeatures(result);
    const warning = ignoredOptionsWarning(result);
    if (warning && !this.warned.has(warning)) {
      this.warned.add(warning);
      this.options.log?.('warn', warning);
    }
  }

  /** The entries of a page when the daemon connected last serves paging; undefined: read every entry. */
  private pageLimit(): number | undefined {
    const limit = this.options.pageEntries ?? DEFAULT_PAGE_ENTRIES;
    return limit > 0 && this.features?.has('transcriptPaging') ? limit : undefined;
  }

  /** claude/attach's (and a resuming claude/newChannel's) `limit`, when the daemon pages. */
  private limitParam(): { limit?: number } {
    const limit = this.pageLimit();
    return limit ? { limit } : {};
  }

  /** Read through a call: a check of the field before an await does not hold after it. */
  private isDisposed(): boolean {
    return this.disposed;
  }

  private setState(state: DaemonState): void {
    if (state === this.state) return;
    this.options.log?.('info', `daemon: ${this.state} -> ${state}`);
    this.state = state;
    this.stateEmitter.fire(state);
  }
}
