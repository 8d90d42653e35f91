// The status bar item: the daemon's state, or the focused chat's state, and a click that
// opens the chat (or a new one).

import * as vscode from 'vscode';
import type { DaemonState } from '../core/client';

export interface ChatStatus {
  state: string;
  model?: string | null;
  costUsd?: number;
}

const CHAT_TEXT: Record<string, string> = {
  idle: '$(comment-discussion) Claude',
  running: '$(loading~spin) Claude',
  awaitingPermission: '$(bell-dot) Claude: permission',
  exited: '$(debug-disconnect) Claude: stopped',
  starting: '$(loading~spin) Claude',
};

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem(
    'claudeSidecar.status',
    vscode.StatusBarAlignment.Right,
    100,
  );

  constructor() {
    this.item.name = 'Claude Sidecar';
    this.item.command = 'claudeSidecar.newChat';
    this.show('stopped', undefined);
    this.item.show();
  }

  /** Shows the daemon's state, and the focused chat's when there is one. */
  show(daemon: DaemonState, chat: ChatStatus | undefined): void {
    if (daemon === 'failed') {
      this.item.text = '$(error) Claude';
      this.item.tooltip = 'The claude-sidecar daemon could not run: see the log (Claude: Show Log)';
      this.item.command = 'claudeSidecar.showLog';
      this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
      return;
    }
    this.item.backgroundColor =
      chat?.state === 'awaitingPermission' ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    if (daemon === 'reconnecting') {
      this.item.text = '$(sync~spin) Claude: reconnecting';
      this.item.tooltip = 'The connection to the shared daemon dropped: making it again (the chats keep running)';
      this.item.command = 'claudeSidecar.showLog';
      return;
    }
    if (!chat) {
      this.item.text = daemon === 'restarting' ? '$(sync~spin) Claude' : '$(comment-discussion) Claude';
      this.item.tooltip = daemon === 'restarting' ? 'Restarting the daemon…' : 'New Claude chat';
      this.item.command = 'claudeSidecar.newChat';
      return;
    }
    this.item.text = CHAT_TEXT[chat.state] ?? '$(comment-discussion) Claude';
    const cost = chat.costUsd ? ` · $${chat.costUsd.toFixed(2)}` : '';
    this.item.tooltip = `Claude: ${chat.state}${chat.model ? ` · ${chat.model}` : ''}${cost}`;
    this.item.command = chat.state === 'running' ? 'claudeSidecar.interrupt' : 'claudeSidecar.newChat';
  }

  dispose(): void {
    this.item.dispose();
  }
}
