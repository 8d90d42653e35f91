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

/** The item's fields, the background as its theme colour's id. */
interface Shown {
  text: string;
  tooltip: string;
  command: string;
  background: string | undefined;
}

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem(
    'claudeSidecar.status',
    vscode.StatusBarAlignment.Right,
    100,
  );
  /** What the item shows now: written to it only where it changed (see `write`). */
  private shown: Shown = { text: '', tooltip: '', command: '', background: undefined };

  constructor() {
    this.item.name = 'Claude Sidecar';
    this.show('stopped', undefined);
    this.item.show();
  }

  /** Shows the daemon's state, and the focused chat's when there is one. */
  show(daemon: DaemonState, chat: ChatStatus | undefined): void {
    this.write(StatusBar.describe(daemon, chat));
  }

  private static describe(daemon: DaemonState, chat: ChatStatus | undefined): Shown {
    if (daemon === 'failed') {
      return {
        text: '$(error) Claude',
        tooltip: 'The claude-sidecar daemon could not run: see the log (Claude: Show Log)',
        command: 'claudeSidecar.showLog',
        background: 'statusBarItem.errorBackground',
      };
    }
    const background = chat?.state === 'awaitingPermission' ? 'statusBarItem.warningBackground' : undefined;
    if (daemon === 'reconnecting') {
      return {
        text: '$(sync~spin) Claude: reconnecting',
        tooltip: 'The connection to the shared daemon dropped: making it again (the chats keep running)',
        command: 'claudeSidecar.showLog',
        background,
      };
    }
    if (!chat) {
      return {
        text: daemon === 'restarting' ? '$(sync~spin) Claude' : '$(comment-discussion) Claude',
        tooltip: daemon === 'restarting' ? 'Restarting the daemon…' : 'New Claude chat',
        command: 'claudeSidecar.newChat',
        background,
      };
    }
    const cost = chat.costUsd ? ` · $${chat.costUsd.toFixed(2)}` : '';
    return {
      text: CHAT_TEXT[chat.state] ?? '$(comment-discussion) Claude',
      tooltip: `Claude: ${chat.state}${chat.model ? ` · ${chat.model}` : ''}${cost}`,
      command: chat.state === 'running' ? 'claudeSidecar.interrupt' : 'claudeSidecar.newChat',
      background,
    };
  }

  /**
   * Writes the fields that differ from what the item shows. Every write is a message to VS
   * Code's window, which redraws its status bar on the thread the chat pages share, and the
   * status is shown again on each event of the focused chat: a fast answer's every frame.
   */
  private write(next: Shown): void {
    const shown = this.shown;
    if (next.text !== shown.text) this.item.text = next.text;
    if (next.tooltip !== shown.tooltip) this.item.tooltip = next.tooltip;
    if (next.command !== shown.command) this.item.command = next.command;
    if (next.background !== shown.background) {
      this.item.backgroundColor = next.background ? new vscode.ThemeColor(next.background) : undefined;
    }
    this.shown = next;
  }

  dispose(): void {
    this.item.dispose();
  }
}
