// One chat in an editor tab: a webview showing the chat's transcript, fed by the host.
//
// The host keeps the chat (src/core/chat.ts) and forwards each event; the page keeps a copy
// of the state built by the same store. Closing the tab closes the chat's channel; with the
// shared daemon it only detaches (the chat runs on: "Claude: Close Chat" ends it).

import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Chat } from '../core/chat';
import type { SetModelParams, SetPermissionModeParams } from '../core/protocol.generated';
import type { SidecarClient } from '../core/client';
import { entriesOf, toMessage } from '../core/transcript';
import {
  WHOLE_AT_RESET,
  type HostMessage,
  type WebviewMessage,
  type WebviewOp,
  type WebviewOps,
} from '../shared/webview-messages';
import { webviewHtml } from '../webview/index.html';
import { closeDiffsOf, openFileUpdate, reviewPendingEdit, type DiffContents } from './diff-views';
import type { Logger } from './logger';
import { PageFeed } from './page-feed';

export const VIEW_TYPE = 'claudeSidecar.chat';

/** What the page saves with setState that the host reads back to restore a panel after a reload. */
export interface RestorableState {
  sessionId?: string;
  cwd?: string;
  /** The channel's model and effort (claude/channelInfo): the resumed chat runs with them again. */
  model?: string;
  effort?: string;
  /** The permission mode the chat ran in: the resumed chat runs in it again, not in the setting's. */
  permissionMode?: string;
}

export interface PanelHost {
  client: SidecarClient;
  diffs: DiffContents;
  log: Logger;
  extensionUri: vscode.Uri;
  /** Opens a panel for another chat (a fork). */
  show(chat: Chat): ChatPanel;
  newChat(): Promise<void>;
  showSessions(): Promise<void>;
  /** Whether the daemon was started with bypassPermissions available. */
  allowBypassPermissions(): boolean;
  /** Shared daemon: closing the tab leaves the chat running (claude/detach), not ended. */
  keepsChatsRunning(): boolean;
  /** Whether one of the extension's quick inputs is open: the page does not take the keyboard from it. */
  quickInputOpen(): boolean;
}

type Handlers = { [K in WebviewOp]: (params: WebviewOps[K]['params']) => Promise<WebviewOps[K]['result']> };

export class ChatPanel implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  private ready = false;
  /** The proposed-edit diff editors opened from this chat, by permission request. */
  private readonly reviews = new Map<string, vscode.Uri>();
  private disposed = false;
  /** The page has the keyboard focus (it says so on focus and blur). */
  private pageFocused = false;
  private readonly changed = new vscode.EventEmitter<void>();
  /** The chat's events on their way to the page, coalesced per frame. */
  private readonly feed = new PageFeed((message) => void this.panel.webview.postMessage(message));
  /** The chat's state or the panel's focus changed. */
  readonly onDidChange = this.changed.event;

  constructor(
    readonly chat: Chat,
    readonly panel: vscode.WebviewPanel,
    private readonly host: PanelHost,
  ) {
    const webview = panel.webview;
    webview.options = {
      enableScripts: true,
      localResourceRoots: [vscode.Uri.joinPath(host.extensionUri, 'dist')],
    };
    panel.iconPath = vscode.Uri.joinPath(host.extensionUri, 'media', 'claude.svg');
    webview.html = this.html();
    this.disposables.push(
      webview.onDidReceiveMessage((m: WebviewMessage) => this.received(m)),
      panel.onDidDispose(() => this.dispose()),
      panel.onDidChangeViewState(() => this.changed.fire()),
      chat.onInfo((info) => this.post({ type: 'info', info })),
      chat.onEvent((event) => {
        // Events before `ready` are in the state the page gets with `reset`.
        if (this.ready && !this.disposed) this.feed.event(event, chat.state.rev);
        if (
          event.kind === 'transcript' ||
          event.kind === 'stored' ||
          event.kind === 'snapshot' ||
          (event.kind === 'notification' && event.method === 'claude/entry' && event.params.entry.kind === 'prompt')
        ) {
          this.updateTitle();
        }
        if (event.kind === 'notification' && event.method === 'claude/permissionCancelled') {
          void this.closeReview(event.params.requestId);
        }
        this.changed.fire();
      }),
    );
    this.updateTitle();
  }

  /**
   * The user is in this chat: its tab is the active editor and its page has the keyboard
   * focus (the tab stays active while the user is in the terminal or the side bar).
   */
  get focused(): boolean {
    return !this.disposed && this.panel.active && this.pageFocused;
  }

  /** Shows the tab and focuses the prompt; with `preserveFocus`, shows it only (the keyboard stays where it is). */
  reveal(preserveFocus = false): void {
    this.panel.reveal(undefined, preserveFocus);
    if (!preserveFocus) this.post({ type: 'focusPrompt' });
  }

  /** Puts text into the prompt box; `send` sends it at once. */
  insertPrompt(text: string, send: boolean): void {
    this.panel.reveal();
    this.post({ type: 'insertPrompt', text, send });
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.feed.drop();
    for (const d of this.disposables.splice(0)) d.dispose();
    this.changed.dispose();
    void this.chat.close(this.host.keepsChatsRunning());
  }

  /** A decided or withdrawn proposal's diff editor would show a stale choice: close it. */
  private async closeReview(requestId: string): Promise<void> {
    const uri = this.reviews.get(requestId);
    if (!uri) return;
    this.reviews.delete(requestId);
    await closeDiffsOf(uri);
  }

  /** Where files and diffs open: a column beside the chat, so the chat stays in view. */
  private codeColumn(): vscode.ViewColumn {
    return this.panel.viewColumn === vscode.ViewColumn.One ? vscode.ViewColumn.Beside : vscode.ViewColumn.One;
  }

  private html(): string {
    const dist = vscode.Uri.joinPath(this.host.extensionUri, 'dist');
    const nonce = randomBytes(16).toString('hex');
    return webviewHtml({
      scriptUri: this.panel.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.js')).toString(),
      highlightUri: this.panel.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'highlight.js')).toString(),
      styleUri: this.panel.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.css')).toString(),
      cspSource: this.panel.webview.cspSource,
      nonce,
    });
  }

  private post(message: HostMessage): void {
    // Events before `ready` are in the state the page gets with `reset`.
    if (this.disposed || (!this.ready && message.type !== 'response')) return;
    if (message.type === 'reset') this.feed.reset(message);
    else this.feed.send(message);
  }

  private updateTitle(): void {
    const first = this.chat.prompts[0]?.text.trim().split('\n')[0];
    this.panel.title = first ? `Claude: ${first.slice(0, 40)}` : 'Claude';
  }

  private async received(message: WebviewMessage): Promise<void> {
    switch (message.type) {
      case 'ready':
        this.ready = true;
        this.post({
          type: 'reset',
          // The page asks for the entries it draws: a long chat is not decoded there whole.
          state: toMessage(this.chat.state, WHOLE_AT_RESET),
          info: this.chat.info,
          workspaceFolders: (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath),
          allowBypassPermissions: this.host.allowBypassPermissions(),
        });
        // The tab the user is in (a new chat, or the active one restored by a reload):
        // typing goes to the prompt. A tab restored behind it keeps out of the way.
        if (this.panel.active && !this.host.quickInputOpen()) this.post({ type: 'focusPrompt' });
        return;
      case 'received':
        this.feed.received();
        return;
      case 'focus':
        this.pageFocused = message.focused;
        this.changed.fire();
        return;
      case 'log':
        this.host.log[message.level](`webview: ${message.message}`);
        return;
      case 'request': {
        try {
          const result = await this.handle(message.op, message.params);
          this.post({ type: 'response', id: message.id, result: result ?? null });
        } catch (e) {
          const error = e as Error & { code?: number };
          this.host.log.warn(`${message.op}: ${error.message}`);
          this.post({ type: 'response', id: message.id, error: { message: error.message, code: error.code } });
        }
      }
    }
  }

  /** Runs one operation the page asked for (public for the extension tests, which act as the page). */
  handle<K extends WebviewOp>(op: K, params: WebviewOps[K]['params']): Promise<WebviewOps[K]['result']> {
    return (this.handlers[op] as (p: WebviewOps[K]['params']) => Promise<WebviewOps[K]['result']>)(params);
  }

  private readonly handlers: Handlers = {
    send: async ({ text, images }) => ({ messageId: await this.chat.send(text, images ?? []) }),
    interrupt: async () => {
      await this.chat.interrupt();
      return null;
    },
    respondPermission: async (answer) => {
      await this.chat.respondPermission(answer);
      await this.closeReview(answer.requestId);
      return null;
    },
    reviewPermission: async ({ requestId }) => {
      this.reviews.set(requestId, await reviewPendingEdit(this.host.diffs, this.chat, requestId, this.codeColumn()));
      return null;
    },
    openFileDiff: async ({ seq }) => {
      await openFileUpdate(this.host.diffs, this.chat, seq, this.codeColumn());
      return null;
    },
    openFile: async ({ path: file, line }) => {
      const absolute = path.isAbsolute(file) ? file : path.join(this.chat.folder, file);
      const position = new vscode.Position(Math.max(0, (line ?? 1) - 1), 0);
      await vscode.window.showTextDocument(vscode.Uri.file(absolute), {
        selection: new vscode.Range(position, position),
        viewColumn: this.codeColumn(),
      });
      return null;
    },
    setModel: async ({ model, effort }) => {
      // The page offers the CLI's own values; the daemon checks them (invalidParams names the field).
      await this.chat.setModel(model, effort as SetModelParams['effort']);
      return null;
    },
    setPermissionMode: async ({ mode }) => {
      await this.chat.setPermissionMode(mode as SetPermissionModeParams['mode']);
      return null;
    },
    fork: async ({ messageId }) => {
      const fork = await this.host.client.forkChat(this.chat, messageId);
      this.host.show(fork);
      return null;
    },
    rewind: async ({ messageId, dryRun }) => this.chat.rewind(messageId, dryRun),
    completeFiles: async ({ query }) => ({ paths: await completeFiles(this.chat.folder, query) }),
    showSessions: async () => {
      await this.host.showSessions();
      return null;
    },
    newChat: async () => {
      await this.host.newChat();
      return null;
    },
    listSessions: async () => ({ sessions: await this.host.client.listSessions(this.chat.cwd) }),
    loadOlder: async () => this.chat.loadOlder(),
    entries: ({ ids }) => Promise.resolve({ entries: entriesOf(this.chat.state, ids) }),
  };
}

/** Workspace files under `cwd` whose path contains `query` (case-insensitive), best first. */
export async function completeFiles(cwd: string, query: string): Promise<string[]> {
  const base = vscode.Uri.file(cwd);
  const literal = query.replace(/[[\]{}*?!]/g, '');
  // A query with a slash matches the path from a folder on; otherwise any part of the name.
  const glob = !literal ? '**/*' : literal.includes('/') ? `**/${literal}*` : `**/*${literal}*`;
  const found = await vscode.workspace.findFiles(
    new vscode.RelativePattern(base, glob),
    '**/{node_modules,.git,dist,out,.venv,__pycache__}/**',
    200,
  );
  const q = query.toLowerCase();
  const rel = found.map((u) => path.relative(cwd, u.fsPath));
  const score = (p: string) => {
    const name = path.basename(p).toLowerCase();
    if (name.startsWith(q)) return 0;
    if (name.includes(q)) return 1;
    return 2;
  };
  return rel.sort((a, b) => score(a) - score(b) || a.length - b.length || a.localeCompare(b)).slice(0, 50);
}
