// The client of one daemon for the whole editor window: starts it when first needed,
// routes its notifications to chats, serves its editor-tool requests, and when it dies
// starts a new one and moves every chat onto it (same session, new channel).

import { Emitter, type Event } from 'vscode-jsonrpc/node';
import { Chat } from './chat';
import { DaemonConnection, type DaemonExit, type DaemonOptions, type Log } from './connection';
import { SidecarError } from './errors';
import type {
  ChannelInfo,
  ClaudeNotifications,
  InitializationOptions,
  NewChannelParams,
  SessionPage,
  SessionSummary,
} from './protocol.generated';

/** Notifications kept per channel that no chat holds yet (its first ones, before newChannel answers). */
const EARLY_NOTIFICATIONS_KEPT = 50;

/** The daemon's life as the client sees it; every change is logged and emitted. */
export type DaemonState = 'stopped' | 'starting' | 'running' | 'restarting' | 'failed';

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
}

/** Injected so tests can count or fail daemon starts. */
export type DaemonStarter = (options: DaemonOptions) => Promise<DaemonConnection>;

export class SidecarClient {
  private readonly stateEmitter = new Emitter<DaemonState>();
  readonly onDaemonState: Event<DaemonState> = this.stateEmitter.event;
  private readonly chatEmitter = new Emitter<Chat>();
  /** A chat was opened (new, resumed or forked). */
  readonly onChatOpened: Event<Chat> = this.chatEmitter.event;

  private current: DaemonConnection | undefined;
  private starting: Promise<DaemonConnection> | undefined;
  private readonly chats = new Map<string, Chat>();
  private closedChannels = new Set<string>();
  private early = new Map<string, [keyof ClaudeNotifications, unknown][]>();
  private nextChat = 1;
  private restarts: number[] = [];
  private disposed = false;
  state: DaemonState = 'stopped';
  lastExit: DaemonExit | undefined;

  constructor(
    private readonly options: ClientOptions,
    private readonly startDaemon: DaemonStarter = (options) => DaemonConnection.start(options),
  ) {}

  /** The running daemon, started (or restarted after a failure) when needed. */
  daemon(): Promise<DaemonConnection> {
    if (this.current?.alive) return Promise.resolve(this.current);
    if (this.disposed) return Promise.reject(new SidecarError('the extension is shutting down', 'daemon'));
    this.starting ??= this.start().finally(() => (this.starting = undefined));
    return this.starting;
  }

  /** Opens a new chat (a new channel: a new session, or `params.resume`). */
  async openChat(params: NewChannelParams): Promise<Chat> {
    const chat = new Chat(
      `chat-${this.nextChat++}`,
      { ...params },
      () => this.daemon(),
      (c) => this.closeChat(c),
    );
    if (params.resume) chat.hasConversation = true;
    await this.bindChannel(chat, params);
    this.chats.set(chat.id, chat);
    this.chatEmitter.fire(chat);
    return chat;
  }

  /** Resumes a stored session in a new chat, which shows the conversation so far. */
  async resumeChat(cwd: string, sessionId: string, params: Partial<NewChannelParams> = {}): Promise<Chat> {
    const chat = new Chat(
      `chat-${this.nextChat++}`,
      { ...params, cwd, resume: sessionId },
      () => this.daemon(),
      (c) => this.closeChat(c),
    );
    chat.hasConversation = true;
    await this.bindChannel(chat, chat.channelParams);
    // A resumed channel starts with the stored session's entries, served by its transcript.
    await chat.loadTranscript();
    this.chats.set(chat.id, chat);
    this.chatEmitter.fire(chat);
    return chat;
  }

  /**
   * Forks a chat into a new one (a new session holding the conversation up to
   * `atMessageId`, or all of it); the new chat shows the conversation it holds.
   */
  async forkChat(chat: Chat, atMessageId?: string): Promise<Chat> {
    if (!chat.channelId) throw new SidecarError('this chat has no channel yet', 'claude/forkSession');
    const daemon = await this.daemon();
    const result = await daemon.request('claude/forkSession', {
      channelId: chat.channelId,
      ...(atMessageId ? { atMessageId } : {}),
    });
    const fork = new Chat(
      `chat-${this.nextChat++}`,
      { ...chat.channelParams, resume: result.sessionId },
      () => this.daemon(),
      (c) => this.closeChat(c),
    );
    fork.hasConversation = true;
    this.bound(fork, result.channelId, result.sessionId, result.info, result.pid);
    // The fork's channel starts with the source's entries, cut by the daemon at atMessageId.
    await fork.loadTranscript();
    this.chats.set(fork.id, fork);
    this.chatEmitter.fire(fork);
    return fork;
  }

  /** Stored sessions of a workspace folder, newest first (all pages). */
  async listSessions(cwd: string, limit = 200): Promise<SessionSummary[]> {
    const daemon = await this.daemon();
    const sessions: SessionSummary[] = [];
    let cursor: string | null = null;
    do {
      const page: SessionPage = await daemon.request('claude/listSessions', {
        cwd,
        limit: Math.min(limit, 100),
        cursor,
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
    const daemon = this.current ?? (await this.starting?.catch(() => undefined));
    this.current = undefined;
    await daemon?.dispose();
    this.setState('stopped');
  }

  private async start(): Promise<DaemonConnection> {
    this.setState(this.state === 'stopped' ? 'starting' : 'restarting');
    try {
      const daemon = await this.startDaemon({
        command: this.options.command,
        cwd: this.options.cwd,
        env: this.options.env,
        initializationOptions: this.options.initializationOptions ?? {},
        log: this.options.log,
      });
      daemon.onNotification((method, params) => this.route(method, params));
      daemon.onClientRequest('claude/callEditorTool', (params) => this.callEditorTool(params));
      daemon.onExit((exit) => this.daemonExited(daemon, exit));
      this.current = daemon;
      // Channel ids are per daemon: a new one starts counting again.
      this.early = new Map();
      this.closedChannels = new Set();
      this.setState('running');
      return daemon;
    } catch (e) {
      this.setState('failed');
      throw e;
    }
  }

  private route<M extends keyof ClaudeNotifications>(method: M, params: ClaudeNotifications[M]): void {
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

  private async bindChannel(chat: Chat, params: NewChannelParams): Promise<void> {
    const daemon = await this.daemon();
    const result = await daemon.request('claude/newChannel', params);
    this.bound(chat, result.channelId, result.sessionId, result.info, result.pid);
  }

  private bound(chat: Chat, channelId: string, sessionId: string, info: ChannelInfo | null, pid?: number): void {
    chat.bind(channelId, sessionId, info, pid);
    const early = this.early.get(channelId) ?? [];
    this.early.delete(channelId);
    for (const [method, params] of early) chat.notify(method, params as never);
  }

  private async closeChat(chat: Chat): Promise<void> {
    this.chats.delete(chat.id);
    const channelId = chat.channelId;
    if (channelId) this.closedChannels.add(channelId);
    if (!channelId || !this.current?.alive) return;
    try {
      await this.current.request('claude/closeChannel', { channelId });
    } catch (e) {
      this.options.log?.('warn', `closing ${channelId}: ${(e as Error).message}`);
    }
  }

  private daemonExited(daemon: DaemonConnection, exit: DaemonExit): void {
    if (daemon !== this.current) return;
    this.current = undefined;
    this.lastExit = exit;
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
      const params: NewChannelParams = { ...chat.channelParams };
      if (chat.hasConversation && chat.sessionId) params.resume = chat.sessionId;
      else delete params.resume;
      try {
        await this.bindChannel(chat, params);
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

  private setState(state: DaemonState): void {
    if (state === this.state) return;
    this.options.log?.('info', `daemon: ${this.state} -> ${state}`);
    this.state = state;
    this.stateEmitter.fire(state);
  }
}
