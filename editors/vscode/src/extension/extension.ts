// The extension's entry: settings -> one daemon client for the window, chat panels,
// commands, the status bar and the editor tools. The logic lives in src/core; this layer
// only connects it to VS Code.

import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Chat } from '../core/chat';
import { cliReport } from '../core/cli-report';
import { SidecarClient } from '../core/client';
import { SidecarError } from '../core/errors';
import { CHECK_FOR_UPDATES, COPY_FIX, mismatchPrompt, ProtocolMismatchError } from '../core/handshake';
import { FEATURE_NAMES, type ChannelSummary, type NewChannelParams } from '../core/protocol.generated';
import { worktreeNameFrom } from '../core/agents';
import { attachList } from '../core/running-chats';
import { sessionItem, type SessionItem } from '../core/session-list';
import { API_KEY, COPY_COMMAND, SIGN_IN, signInPrompt, type SignInPrompt } from '../core/sign-in';
import { ChatsView, type ChatsHost } from './chats-view';
import { ChatPanel, VIEW_TYPE, type PanelHost, type RestorableState } from './chat-panel';
import { DIFF_SCHEME, DiffContents } from './diff-views';
import { currentTextEditor, EDITOR_TOOL_HANDLERS, EDITOR_TOOLS, trackLastTextEditor } from './editor-tools';
import { coreLog, createLogger, type Logger } from './logger';
import { readSettings, type Settings } from './settings';
import { QuickInputs } from './quick-inputs';
import { StatusBar } from './status-bar';

const STATE_WORDS: Record<string, string> = {
  starting: 'starting',
  idle: 'idle',
  running: 'working',
  awaitingPermission: 'waiting for a permission',
  exited: 'exited',
};

/** Every mode a channel can run in (a key the protocol's type lacks, or one it adds, fails the type check). */
const CHANNEL_MODES: Record<Settings['permissionMode'], true> = {
  default: true,
  acceptEdits: true,
  plan: true,
  bypassPermissions: true,
  dontAsk: true,
  auto: true,
};

/**
 * The permission mode a reloaded chat resumes in: the one it ran in, else the setting's. A
 * chat that bypassed permissions comes back so only while the setting still allows it (the
 * daemon refuses the mode otherwise, and the chat would not come back at all).
 */
function restoredMode(mode: string | undefined, settings: Settings): Settings['permissionMode'] {
  if (!mode || !Object.hasOwn(CHANNEL_MODES, mode)) return settings.permissionMode;
  if (mode === 'bypassPermissions' && !settings.allowDangerouslySkipPermissions) return settings.permissionMode;
  return mode as Settings['permissionMode'];
}

/** The editors attached to a running chat, in words. */
function attachedEditors(channel: ChannelSummary): string {
  const names = (channel.clients ?? []).map((c) => c.clientName ?? c.connectionId);
  return names.length ? `attached: ${names.join(', ')}` : 'no editor attached';
}

class Extension implements PanelHost, ChatsHost, vscode.Disposable {
  readonly log: Logger = createLogger();
  readonly diffs = new DiffContents();
  private readonly statusBar = new StatusBar();
  /** The quick inputs open now: a chat tab that opens meanwhile leaves the keyboard in them. */
  readonly quickInputs = new QuickInputs();
  private readonly panels = new Map<string, ChatPanel>();
  private clientInstance: SidecarClient | undefined;
  private bypassAvailable = false;
  private readonly cliReported = new Set<string>();
  /**
   * The chat panels, the one the user worked with last at the end: moved there when the
   * extension shows a panel and when VS Code reports one active. Kept by the extension, not
   * read from `WebviewPanel.active`: a panel just created or revealed counts as active at
   * once, while the one it replaced stays active too until VS Code's view-state update
   * arrives, so two panels may both say they are active.
   */
  private readonly recent: ChatPanel[] = [];
  private shared = false;
  /** The value of the context key claudeSidecar.chatFocused last set (the chat keybindings' `when`). */
  chatFocused = false;
  /** The window's tabs are being closed for it (deactivation, a daemon restart), not by the user. */
  private disposing = false;
  /** The Claude Chats view (activity bar), made at activation. */
  chatsView: ChatsView | undefined;
  /** The protocol mismatch shown now: the same one again (each restored tab, each command) is not shown twice. */
  private mismatchShown: string | undefined;

  constructor(
    readonly extensionUri: vscode.Uri,
    /** `publisher.name`: what "Check for Extension Updates" shows in the Extensions view. */
    private readonly extensionId: string,
  ) {}

  /** The window's daemon client, made from the settings when first needed. */
  get client(): SidecarClient {
    if (!this.clientInstance) {
      const settings = readSettings();
      this.bypassAvailable = settings.allowDangerouslySkipPermissions;
      this.shared = settings.daemon === 'shared';
      const client = new SidecarClient({
        command: settings.daemonCommand,
        shared: this.shared,
        env: { ...process.env, ...settings.env },
        cwd: this.workspaceFolder(),
        log: coreLog(this.log),
        initializationOptions: {
          // Shown to other editors attached to the same chat: which window this is.
          clientName: `VS Code · ${vscode.workspace.name ?? 'no folder'}`,
          ...(settings.cliPath ? { cliPath: settings.cliPath } : {}),
          allowDangerouslySkipPermissions: settings.allowDangerouslySkipPermissions,
          autoAllowTools: settings.autoAllowTools,
          editorTools: EDITOR_TOOLS,
          coalesceDeltasMs: 16,
          warmPool: { size: 1, cwd: this.workspaceFolder() },
        },
        editorTools: EDITOR_TOOL_HANDLERS,
        pageEntries: settings.pageEntries,
      });
      let previous = client.state;
      client.onDaemonState((state) => {
        this.refreshStatus();
        if (state === 'running') {
          void this.reportCli(client);
          this.showFeatures(client.features);
        }
        if (state === 'failed' && client.lastFailure instanceof ProtocolMismatchError) {
          void this.showMismatch(client.lastFailure);
        }
        // Said once per drop, for as long as it lasts; each chat shows "reconnecting" too.
        if (state === 'reconnecting' && previous === 'running') {
          const over = new Promise<void>((resolve) => {
            const sub = client.onDaemonState((next) => {
              if (next === 'reconnecting') return;
              sub.dispose();
              resolve();
            });
          });
          void vscode.window.withProgress(
            {
              location: vscode.ProgressLocation.Notification,
              title: 'Claude: the connection to the shared daemon dropped; reconnecting…',
            },
            () => over,
          );
        }
        if (
          state === 'failed' &&
          previous === 'reconnecting' &&
          !(client.lastFailure instanceof ProtocolMismatchError)
        ) {
          void this.showError('Claude: could not connect to the shared daemon again; send a message to try once more.');
        }
        previous = state;
      });
      client.onChatOpened((chat) =>
        chat.onEvent((e) => {
          if (e.kind === 'connection') this.refreshStatus();
          const signIn = signInPrompt(e);
          if (signIn) void this.showSignIn(signIn);
        }),
      );
      this.clientInstance = client;
      this.chatsView?.follow(client);
    }
    return this.clientInstance;
  }

  allowBypassPermissions(): boolean {
    return this.bypassAvailable;
  }

  /** The settings ask for the shared daemon (said before the client is made, unlike keepsChatsRunning). */
  usesSharedDaemon(): boolean {
    return readSettings().daemon === 'shared';
  }

  /** Shared daemon: a closed chat tab leaves its chat running in the daemon. */
  keepsChatsRunning(): boolean {
    return this.shared;
  }

  /** Shared daemon: a tab closed mid-turn left its chat running; says so, and offers to end it. */
  private async offerToEnd(chat: Chat): Promise<void> {
    const channelId = chat.channelId;
    const pick = await vscode.window.showInformationMessage(
      'Claude: the chat keeps running in the shared daemon ("Claude: Attach to a Running Chat" opens it again).',
      'End the Chat',
    );
    if (pick !== 'End the Chat' || !channelId) return;
    try {
      await this.client.closeChannel(channelId);
    } catch (e) {
      void this.showError(`Claude: cannot end the chat: ${(e as Error).message}`);
    }
  }

  /** A turn that needs the CLI signed in: the daemon's fix, with buttons that run it. */
  private async showSignIn(prompt: SignInPrompt): Promise<void> {
    this.log.error(prompt.text);
    const pick = await vscode.window.showErrorMessage(prompt.text, ...prompt.actions);
    const run = pick === SIGN_IN ? prompt.command : pick === API_KEY ? prompt.apiKeyCommand : undefined;
    if (run) {
      // The CLI's sign-in is interactive (a browser page, then a code to paste): a terminal.
      const terminal = vscode.window.createTerminal({ name: 'Claude: sign in' });
      terminal.show();
      terminal.sendText(run);
    } else if (pick === COPY_COMMAND && prompt.command) {
      await vscode.env.clipboard.writeText(prompt.command);
      void vscode.window.showInformationMessage(`Copied: ${prompt.command}. Run it in a terminal to sign in.`);
    }
  }

  /**
   * Hides what the daemon does not serve: a context key per feature the daemon left out
   * (`claudeSidecar.daemonLacks.<feature>`), read by the commands' `when` clauses. Unset
   * (shown) until a daemon said, and after a restart.
   */
  private showFeatures(features: ReadonlySet<string> | undefined): void {
    for (const feature of FEATURE_NAMES) {
      const lacks = features !== undefined && !features.has(feature);
      void vscode.commands.executeCommand('setContext', `claudeSidecar.daemonLacks.${feature}`, lacks);
    }
  }

  /**
   * The daemon and the extension do not fit: one error notification saying which to upgrade,
   * with the command (Copy Command) and, when the extension is the older one, a button that
   * looks for its update in the Extensions view.
   */
  async showMismatch(error: ProtocolMismatchError): Promise<void> {
    const prompt = mismatchPrompt(error);
    this.log.error(prompt.text);
    if (this.mismatchShown === prompt.text) return;
    this.mismatchShown = prompt.text;
    let pick: string | undefined;
    try {
      pick = await vscode.window.showErrorMessage(prompt.text, ...prompt.actions);
    } finally {
      this.mismatchShown = undefined;
    }
    if (pick === COPY_FIX) {
      await vscode.env.clipboard.writeText(prompt.command);
      void vscode.window.showInformationMessage(`Copied: ${prompt.command}. Run it in a terminal.`);
    } else if (pick === CHECK_FOR_UPDATES) {
      await vscode.commands.executeCommand('workbench.extensions.search', `@id:${this.extensionId}`);
      await vscode.commands.executeCommand('workbench.extensions.action.checkForUpdates').then(
        () => undefined,
        (e: unknown) => this.log.debug(`checking for extension updates: ${(e as Error).message}`),
      );
    }
  }

  private async showError(message: string): Promise<void> {
    if ((await vscode.window.showErrorMessage(message, 'Show Log')) === 'Show Log') this.log.show();
  }

  /** Logs which CLI the daemon runs; a CLI that cannot run or is untested is shown to the user once. */
  private async reportCli(client: SidecarClient): Promise<void> {
    const result = (await client.daemon()).initializeResult;
    if (!result) return;
    const report = cliReport(result);
    this.log[report.level](report.text);
    if (report.level === 'info' || this.cliReported.has(report.text)) return;
    this.cliReported.add(report.text);
    const show = report.level === 'error' ? vscode.window.showErrorMessage : vscode.window.showWarningMessage;
    if ((await show(`Claude: ${report.text}`, 'Show Log')) === 'Show Log') this.log.show();
  }

  quickInputOpen(): boolean {
    return this.quickInputs.showing;
  }

  /** The folder new chats run in: the active editor's workspace folder, else the first one. */
  workspaceFolder(): string {
    const active = currentTextEditor()?.document.uri;
    const folder = (active && vscode.workspace.getWorkspaceFolder(active)) ?? vscode.workspace.workspaceFolders?.[0];
    return folder?.uri.fsPath ?? process.env.HOME ?? '/';
  }

  /**
   * Shows `chat` in a tab: a new one, brought to the front; or `panel`, a tab VS Code restored
   * after a reload, left where it is: the window restores its tabs one by one, and revealing
   * each would leave the last one restored in front instead of the one the user had active.
   */
  show(chat: Chat, panel?: vscode.WebviewPanel): ChatPanel {
    // A chat that opens while the user answers a quick input (a second New Chat in Worktree…
    // asked while the first chat starts) is shown without taking the keyboard from it.
    const preserveFocus = this.quickInputs.showing;
    const existing = this.panels.get(chat.id);
    if (existing) {
      this.focused(existing);
      existing.reveal(preserveFocus);
      return existing;
    }
    const webviewPanel =
      panel ??
      vscode.window.createWebviewPanel(
        VIEW_TYPE,
        'Claude',
        { viewColumn: chatColumn() ?? vscode.ViewColumn.Beside, preserveFocus },
        {
          enableScripts: true,
          retainContextWhenHidden: false,
          enableFindWidget: true,
        },
      );
    const chatPanel = new ChatPanel(chat, webviewPanel, this);
    this.panels.set(chat.id, chatPanel);
    chatPanel.onDidChange(() => {
      this.updateChatFocused();
      this.refreshStatus();
    });
    webviewPanel.onDidChangeViewState((e) => {
      // Only a panel becoming active moves: one losing focus keeps its place (it stays the
      // chat that commands act on while the user is in a text editor).
      if (e.webviewPanel.active) this.focused(chatPanel);
    });
    webviewPanel.onDidDispose(() => {
      this.panels.delete(chat.id);
      const at = this.recent.indexOf(chatPanel);
      if (at >= 0) this.recent.splice(at, 1);
      this.updateChatFocused();
      this.refreshStatus();
      const working = chat.state.status.state === 'running' || chat.state.status.state === 'awaitingPermission';
      if (chat.keptRunning && working && !this.disposing) void this.offerToEnd(chat);
    });
    if (!panel) {
      this.focused(chatPanel);
      chatPanel.reveal(preserveFocus);
    } else if (webviewPanel.active) {
      this.focused(chatPanel);
    } else {
      // A restored tab in the background: the chat commands act on it only once the user goes to it.
      this.recent.unshift(chatPanel);
    }
    return chatPanel;
  }

  /** Sets claudeSidecar.chatFocused: whether the user is in a chat tab now (not merely has one). */
  private updateChatFocused(): void {
    const focused = [...this.panels.values()].some((p) => p.focused);
    if (focused === this.chatFocused) return;
    this.chatFocused = focused;
    void vscode.commands.executeCommand('setContext', 'claudeSidecar.chatFocused', focused);
  }

  /** `panel` is the chat the user works with now. */
  private focused(panel: ChatPanel): void {
    const at = this.recent.indexOf(panel);
    if (at >= 0) this.recent.splice(at, 1);
    this.recent.push(panel);
    this.refreshStatus();
  }

  async newChat(): Promise<void> {
    const settings = readSettings();
    const chat = await this.withProgress('Starting Claude…', () =>
      this.client.openChat({
        cwd: this.workspaceFolder(),
        ...(settings.model ? { model: settings.model } : {}),
        permissionMode: settings.permissionMode,
      }),
    );
    this.show(chat);
  }

  async showSessions(): Promise<void> {
    const cwd = this.workspaceFolder();
    const sessions = await this.withProgress('Listing sessions…', () => this.client.listSessions(cwd));
    if (sessions.length === 0) {
      void vscode.window.showInformationMessage(`No Claude sessions stored for ${cwd} yet.`);
      return;
    }
    const picker = vscode.window.createQuickPick<SessionItem>();
    picker.title = 'Resume a Claude session';
    picker.matchOnDescription = true;
    picker.matchOnDetail = true;
    // Kept open on focus-out: run from the palette while the chat has focus, the webview takes
    // focus back a moment after the palette closes, which would dismiss a plain picker at once.
    picker.ignoreFocusOut = true;
    picker.items = sessions.map((s) => sessionItem(s));
    // A long session listed before the daemon read it whole: its count arrives later.
    const refresh = this.client.onSessionsChanged(({ cwd: changed }) => {
      if (changed !== cwd) return;
      void this.client.listSessions(cwd).then(
        (fresh) => {
          const active = picker.activeItems[0]?.sessionId;
          picker.items = fresh.map((s) => sessionItem(s));
          const again = picker.items.find((item) => item.sessionId === active);
          if (again) picker.activeItems = [again];
        },
        (e: unknown) => this.log.debug(`sessions of ${cwd}: ${(e as Error).message}`),
      );
    });
    const pick = await this.quickInputs.ask(
      () =>
        new Promise<SessionItem | undefined>((resolve) => {
          picker.onDidAccept(() => resolve(picker.selectedItems[0]));
          picker.onDidHide(() => resolve(undefined));
          picker.show();
        }),
    );
    refresh.dispose();
    picker.dispose();
    if (!pick) return;
    await this.openSession(cwd, pick.sessionId);
  }

  /**
   * Opens a stored session picked from the list: the chat tab of this window that has it, if
   * there is one (a second tab would be a second view of the same chat), else a resumed chat.
   */
  async openSession(cwd: string, sessionId: string): Promise<void> {
    const open = [...this.panels.values()].find((p) => p.chat.sessionId === sessionId && !p.chat.closed);
    if (open) {
      this.show(open.chat);
      return;
    }
    await this.resume(cwd, sessionId);
  }

  /** Opens a stored session in a chat; `restored`: the model, effort and mode a reloaded chat had. */
  async resume(
    cwd: string,
    sessionId: string,
    panel?: vscode.WebviewPanel,
    restored: Pick<RestorableState, 'model' | 'effort' | 'permissionMode'> = {},
  ): Promise<void> {
    const settings = readSettings();
    // A resumed channel would know its model only from the CLI's next answer, and its effort not at
    // all: a reloaded chat's page kept them, and they are given to the new channel. So is its
    // permission mode: a chat the user put in plan mode must not come back free to edit files.
    const model = restored.model;
    const effort = restored.effort as NewChannelParams['effort'];
    // Shown as soon as its stored last page is read (the CLI of a long session takes seconds
    // to start): the tab opens on the chat's end, starting.
    const chat = await this.withProgress('Resuming the session…', () =>
      this.client.resumeChat(
        cwd,
        sessionId,
        {
          permissionMode: restoredMode(restored.permissionMode, settings),
          ...(model ? { model } : {}),
          ...(effort ? { effort } : {}),
        },
        (early) => this.show(early, panel),
      ),
    );
    // Its tab was closed while it opened; or it is shown already, where the user may have moved on.
    if (chat.closed || this.panels.has(chat.id)) return;
    this.show(chat, panel);
  }

  /**
   * Shared daemon: a quick pick of the running chats of this workspace (folder, state, model,
   * the editors attached), with an item that shows the other folders' too; the one picked
   * opens in a chat panel (its conversation so far, its pending permission requests, then
   * live). A chat shown in this window is revealed.
   */
  async attach(): Promise<void> {
    if (readSettings().daemon !== 'shared') {
      // Said without starting a daemon: the private one would only refuse (notShared).
      throw new SidecarError(
        'attaching to a running chat needs the shared daemon: set claudeSidecar.daemon to "shared"',
        'claudeSidecar.daemon',
      );
    }
    const client = this.client;
    const channels = await this.withProgress('Listing running chats…', () => client.listChannels());
    const running = channels.filter((c) => c.state !== 'exited');
    if (running.length === 0) {
      void vscode.window.showInformationMessage('No Claude chat is running in the shared daemon.');
      return;
    }
    const titles = await this.sessionTitles(client, running);
    const shown = new Set(client.allChats().map((c) => c.sessionId));
    type Item = vscode.QuickPickItem & { channel?: ChannelSummary; showAll?: true };
    const item = (channel: ChannelSummary): Item => ({
      label: titles.get(channel.sessionId) ?? '(no message yet)',
      description: [
        path.basename(channel.cwd),
        STATE_WORDS[channel.state] ?? channel.state,
        channel.model ?? '',
        shown.has(channel.sessionId) ? 'open in this window' : '',
      ]
        .filter(Boolean)
        .join(' · '),
      detail: `${channel.cwd} · ${attachedEditors(channel)} · ${channel.channelId}`,
      channel,
    });
    // The daemon is per user and runs the chats of every folder: the list is this window's
    // folders' (as a workspace's session list is), and the others are one pick away.
    const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
    const choose = (all: boolean): Thenable<Item | undefined> => {
      const list = attachList(running, folders, all, path.sep);
      const items: Item[] = list.groups.flatMap((g) => [
        ...(g.heading ? [{ label: g.heading, kind: vscode.QuickPickItemKind.Separator }] : []),
        ...g.channels.map(item),
      ]);
      if (list.hidden) {
        items.push({
          label: `$(list-unordered) Show the chats of other folders (${list.hidden})`,
          description: "the shared daemon runs every folder's chats",
          alwaysShow: true,
          showAll: true,
        });
      }
      const here = list.groups.some((g) => g.heading === 'This workspace');
      return this.quickInputs.ask(() =>
        vscode.window.showQuickPick(items, {
          title:
            folders.length && !here
              ? 'Attach to a running Claude chat (none runs in this workspace)'
              : 'Attach to a running Claude chat',
          matchOnDescription: true,
          matchOnDetail: true,
          ignoreFocusOut: true,
        }),
      );
    };
    let pick = await choose(false);
    // Asked for the others: the list again with every chat (none is left out then).
    if (pick?.showAll) pick = await choose(true);
    if (!pick?.channel) return;
    const channel = pick.channel;
    const chat = await this.withProgress('Attaching to the chat…', () => client.attachChat(channel));
    this.show(chat);
  }

  /** The titles of the running chats' sessions (their first prompt), where stored already. */
  private async sessionTitles(client: SidecarClient, channels: ChannelSummary[]): Promise<Map<string, string>> {
    const titles = new Map<string, string>();
    for (const cwd of new Set(channels.map((c) => c.cwd))) {
      try {
        for (const s of await client.listSessions(cwd, 100)) {
          titles.set(s.sessionId, s.customTitle || s.title || s.firstPrompt || s.sessionId);
        }
      } catch (e) {
        this.log.debug(`sessions of ${cwd}: ${(e as Error).message}`);
      }
    }
    return titles;
  }

  /**
   * After a window reload: the chat a panel showed. With the shared daemon, a chat still
   * running there is attached to (the turn it was in goes on); else its session is resumed.
   */
  async restore(
    panel: vscode.WebviewPanel,
    state: RestorableState & { sessionId: string; cwd: string },
  ): Promise<void> {
    if (readSettings().daemon === 'shared') {
      const client = this.client;
      const channel = (await client.listChannels()).find(
        (c) => c.sessionId === state.sessionId && c.state !== 'exited',
      );
      if (channel) {
        const chat = await this.withProgress('Attaching to the chat…', () => client.attachChat(channel));
        this.show(chat, panel);
        return;
      }
    }
    await this.resume(state.cwd, state.sessionId, panel, state);
  }

  /** Closes the chat tabs of this window that show the chat `channelId` (its worktree was
   * discarded: the chat cannot go on there). */
  closeChannelTabs(channelId: string): void {
    for (const panel of [...this.panels.values()]) {
      if (panel.chat.channelId === channelId) panel.panel.dispose();
    }
  }

  /** Whether a chat tab of this window shows the chat `channelId`. */
  showsChannel(channelId: string): boolean {
    return [...this.panels.values()].some((p) => p.chat.channelId === channelId && !p.chat.closed);
  }

  /**
   * Opens a chat of the Claude Chats view: the tab that shows it, else the window's chat
   * (a private daemon's chats are all this window's), else attached (shared daemon).
   */
  async openChannel(channel: ChannelSummary): Promise<void> {
    const client = this.client;
    const own = client.allChats().find((c) => c.channelId === channel.channelId && !c.closed);
    if (own) {
      this.show(own);
      return;
    }
    if (!this.shared) {
      throw new SidecarError(
        'that chat is not open in this window; attaching to it needs the shared daemon: set claudeSidecar.daemon to "shared"',
        'claudeSidecar.daemon',
      );
    }
    const chat = await this.withProgress('Attaching to the chat…', () => client.attachChat(channel));
    this.show(chat);
  }

  /**
   * A new chat in a git worktree of its own: asks what it should do (optional) and the
   * worktree's name, by default the task's first words; the task is sent as its first prompt.
   */
  async newChatInWorktree(): Promise<void> {
    const task = await this.quickInputs.ask(() =>
      vscode.window.showInputBox({
        title: 'New Chat in a Worktree (1/2)',
        prompt: "What should Claude do there? Sent as the chat's first message; leave empty to only name the worktree.",
        ignoreFocusOut: true,
      }),
    );
    if (task === undefined) return;
    const name = await this.quickInputs.ask(() =>
      vscode.window.showInputBox({
        title: 'New Chat in a Worktree (2/2)',
        prompt: "The worktree's name (its branch is worktree-<name>); empty: the daemon picks one.",
        value: worktreeNameFrom(task),
        ignoreFocusOut: true,
      }),
    );
    if (name === undefined) return;
    const settings = readSettings();
    const chat = await this.withProgress('Starting Claude in a new worktree…', () =>
      this.client.openChat({
        cwd: this.workspaceFolder(),
        ...(settings.model ? { model: settings.model } : {}),
        permissionMode: settings.permissionMode,
        worktree: name.trim() ? { name: name.trim() } : {},
      }),
    );
    const panel = this.show(chat);
    // Sent as the page sends a prompt: the page may not have loaded yet to take it.
    if (task.trim()) await panel.handle('send', { text: task.trim() });
  }

  /** Ends the active chat (its CLI), for every editor attached to it, and closes its tab. */
  async closeChat(): Promise<void> {
    const panel = this.requirePanel();
    await panel.chat.close(false);
    panel.panel.dispose();
  }

  /** The chat panel the user works with: the one shown or focused last (see `recent`). */
  activePanel(): ChatPanel | undefined {
    return this.recent.at(-1);
  }

  async sendSelection(): Promise<void> {
    const editor = currentTextEditor();
    if (!editor) {
      void vscode.window.showWarningMessage('Open a file and select some text to send it to Claude.');
      return;
    }
    const doc = editor.document;
    const selection = editor.selection;
    const text = selection.isEmpty ? doc.lineAt(selection.active.line).text : doc.getText(selection);
    const rel = vscode.workspace.asRelativePath(doc.uri);
    const start = selection.start.line + 1;
    const end = selection.end.line + 1;
    const where = start === end ? `${rel}:${start}` : `${rel}:${start}-${end}`;
    const quoted = `@${where}\n\`\`\`${doc.languageId}\n${text}\n\`\`\`\n`;
    let panel = this.activePanel();
    if (!panel) {
      await this.newChat();
      panel = this.activePanel();
    }
    panel?.insertPrompt(quoted, false);
  }

  async interrupt(): Promise<void> {
    const panel = this.activePanel();
    if (!panel) return;
    await panel.chat.interrupt();
  }

  async fork(): Promise<void> {
    const panel = this.requirePanel();
    const fork = await this.withProgress('Forking the chat…', () => this.client.forkChat(panel.chat));
    this.show(fork);
  }

  async rewind(): Promise<void> {
    const panel = this.requirePanel();
    const prompts = [...panel.chat.prompts].reverse();
    if (prompts.length === 0) {
      void vscode.window.showInformationMessage('This chat has no messages to rewind to.');
      return;
    }
    const pick = await this.quickInputs.ask(() =>
      vscode.window.showQuickPick(
        prompts.map((p) => ({ label: p.text.split('\n')[0] || '(image)', messageId: p.messageId })),
        { title: 'Rewind files to before this message', ignoreFocusOut: true },
      ),
    );
    if (!pick) return;
    const dry = await panel.chat.rewind(pick.messageId, true);
    if (!dry.canRewind || dry.filesChanged.length === 0) {
      void vscode.window.showInformationMessage(
        dry.canRewind ? 'No file changed since that message.' : 'These files cannot be rewound (no checkpoint).',
      );
      return;
    }
    const files = dry.filesChanged.map((f) => vscode.workspace.asRelativePath(f)).join(', ');
    const answer = await vscode.window.showWarningMessage(
      `Restore ${dry.filesChanged.length} file(s) to before that message? (+${dry.insertions} −${dry.deletions}: ${files})`,
      { modal: true },
      'Rewind',
    );
    if (answer === 'Rewind') await panel.chat.rewind(pick.messageId, false);
  }

  async restartDaemon(): Promise<void> {
    const client = this.clientInstance;
    this.clientInstance = undefined;
    // Said once below for every chat, not per tab.
    this.disposing = true;
    for (const panel of [...this.panels.values()]) panel.panel.dispose();
    this.disposing = false;
    await client?.dispose();
    this.chatsView?.follow(undefined);
    this.showFeatures(undefined);
    void vscode.window.showInformationMessage(
      this.shared
        ? 'Disconnected from the shared Claude daemon; its chats keep running ("Claude: Attach to a Running Chat" opens them).'
        : 'The Claude daemon will start again with the next chat.',
    );
  }

  refreshStatus(): void {
    const chat = this.activePanel()?.chat;
    const daemonState = this.clientInstance?.state ?? 'stopped';
    const state = chat?.reconnecting ? 'reconnecting' : daemonState;
    this.statusBar.show(
      state,
      chat && {
        state: chat.status?.state ?? 'starting',
        model: chat.status?.model,
        costUsd: chat.totalCostUsd,
      },
    );
  }

  async dispose(): Promise<void> {
    this.disposing = true;
    for (const panel of [...this.panels.values()]) panel.dispose();
    await this.clientInstance?.dispose();
    this.chatsView?.dispose();
    this.statusBar.dispose();
    this.diffs.dispose();
    this.log.dispose();
  }

  private requirePanel(): ChatPanel {
    const panel = this.activePanel();
    if (!panel) throw new Error('No Claude chat is open: start one with "Claude: New Chat".');
    return panel;
  }

  private withProgress<T>(title: string, task: () => Promise<T>): Promise<T> {
    return Promise.resolve(vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title }, task));
  }
}

let extension: Extension | undefined;

/** Runs a command, reporting its failure to the user (and the log) instead of throwing. */
function command<A extends unknown[]>(name: string, run: (...args: A) => void | Promise<void>): vscode.Disposable {
  return vscode.commands.registerCommand(name, async (...args: A) => {
    try {
      await run(...args);
    } catch (e) {
      if (e instanceof ProtocolMismatchError) {
        await extension?.showMismatch(e);
        return;
      }
      const message = e instanceof Error ? e.message : String(e);
      extension?.log.error(`${name}: ${message}`);
      // A setting the user can fix gets a button that opens it.
      const where = e instanceof SidecarError ? e.where : '';
      const setting =
        where === 'daemonCommand' ? 'claudeSidecar.daemonCommand' : where.startsWith('claudeSidecar.') ? where : '';
      const actions = setting ? ['Open Settings', 'Show Log'] : ['Show Log'];
      const pick = await vscode.window.showErrorMessage(`Claude: ${message}`, ...actions);
      if (pick === 'Show Log') extension?.log.show();
      if (pick === 'Open Settings') await vscode.commands.executeCommand('workbench.action.openSettings', setting);
    }
  });
}

/** The column of the chat tab in front, if one is: a new chat opens as a tab beside it there,
 * not in a column of its own (three chats would be three narrow columns). */
function chatColumn(): vscode.ViewColumn | undefined {
  const group = vscode.window.tabGroups.activeTabGroup;
  const input = group.activeTab?.input;
  return input instanceof vscode.TabInputWebview && input.viewType.endsWith(VIEW_TYPE) ? group.viewColumn : undefined;
}

export function activate(context: vscode.ExtensionContext): { extension: Extension } {
  const ext = new Extension(context.extensionUri, context.extension.id);
  extension = ext;
  const chats = new ChatsView(ext);
  ext.chatsView = chats;
  context.subscriptions.push(
    { dispose: () => void ext.dispose() },
    vscode.workspace.registerTextDocumentContentProvider(DIFF_SCHEME, ext.diffs),
    trackLastTextEditor(),
    command('claudeSidecar.newChat', () => ext.newChat()),
    command('claudeSidecar.sendSelection', () => ext.sendSelection()),
    command('claudeSidecar.interrupt', () => ext.interrupt()),
    command('claudeSidecar.fork', () => ext.fork()),
    command('claudeSidecar.rewind', () => ext.rewind()),
    command('claudeSidecar.sessions', () => ext.showSessions()),
    command('claudeSidecar.attach', () => ext.attach()),
    command('claudeSidecar.closeChat', () => ext.closeChat()),
    command('claudeSidecar.showLog', () => ext.log.show()),
    command('claudeSidecar.restartDaemon', () => ext.restartDaemon()),
    command('claudeSidecar.newChatInWorktree', () => ext.newChatInWorktree()),
    command('claudeSidecar.refreshChats', () => chats.refresh()),
    command('claudeSidecar.openListedChat', (channel: ChannelSummary) => ext.openChannel(channel)),
    command('claudeSidecar.reviewWorktree', (channel: ChannelSummary) => chats.review(channel)),
    command('claudeSidecar.mergeWorktree', (channel: ChannelSummary) => chats.merge(channel)),
    command('claudeSidecar.discardWorktree', (channel: ChannelSummary) => chats.discard(channel)),
    vscode.window.registerWebviewPanelSerializer(VIEW_TYPE, {
      // A chat tab left open when the window closed comes back as its resumed session.
      async deserializeWebviewPanel(panel: vscode.WebviewPanel, state: RestorableState | undefined) {
        if (state?.sessionId && state.cwd) {
          try {
            await ext.restore(panel, { ...state, sessionId: state.sessionId, cwd: state.cwd });
            return;
          } catch (e) {
            ext.log.warn(`cannot restore the chat of session ${state.sessionId}: ${(e as Error).message}`);
            if (e instanceof ProtocolMismatchError) void ext.showMismatch(e);
          }
        }
        panel.dispose();
      },
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (
        e.affectsConfiguration('claudeSidecar.daemon') ||
        e.affectsConfiguration('claudeSidecar.daemonCommand') ||
        e.affectsConfiguration('claudeSidecar.env') ||
        e.affectsConfiguration('claudeSidecar.cliPath')
      ) {
        void vscode.window.showInformationMessage('Claude: the new settings apply after "Claude: Restart the Daemon".');
      }
    }),
  );
  return { extension: ext };
}

export async function deactivate(): Promise<void> {
  await extension?.dispose();
  extension = undefined;
}
