// The Claude Chats view ("who needs you"): every chat of the daemon in the activity bar, the
// ones waiting for the user first and counted on the view's badge; a click opens the chat, and
// a chat in a git worktree has Review, Merge and Discard. The list itself is the core's
// ChatRoster (claude/watchChannels); this is only how VS Code shows it.

import { execFile } from 'node:child_process';
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  changesText,
  ChatRoster,
  isWaiting,
  lastEventAgo,
  mergeWorktree,
  refusalDetails,
  removeWorktree,
  stateLook,
  worktreeChanges,
  type StateLook,
} from '../core/agents';
import type { SidecarClient } from '../core/client';
import { SidecarError } from '../core/errors';
import type { ChannelSummary, MergeWorktreeParams, WorktreeFile, WorktreeInfo } from '../core/protocol.generated';
import type { DiffContents } from './diff-views';
import type { Logger } from './logger';
import type { QuickInputs } from './quick-inputs';

export const CHATS_VIEW = 'claudeSidecar.chats';

/** What the view needs of the extension. */
export interface ChatsHost {
  readonly log: Logger;
  readonly diffs: DiffContents;
  /** The window's client, made when first needed. */
  readonly client: SidecarClient;
  /** Whether the window uses the shared daemon (the view connects to it when shown). */
  usesSharedDaemon(): boolean;
  /** Whether a chat tab of this window shows the chat. */
  showsChannel(channelId: string): boolean;
  /** Closes the chat tabs of this window that show the chat. */
  closeChannelTabs(channelId: string): void;
  /** Opens the chat in a tab: the one that shows it, else attached. */
  openChannel(channel: ChannelSummary): Promise<void>;
  /** The window's quick inputs open now (a chat tab opening meanwhile leaves them the keyboard). */
  readonly quickInputs: QuickInputs;
}

const ICONS: Record<StateLook['label'], [string, string | undefined]> = {
  waiting: ['bell-dot', 'notificationsWarningIcon.foreground'],
  running: ['sync~spin', undefined],
  starting: ['loading~spin', undefined],
  idle: ['circle-outline', undefined],
  exited: ['circle-slash', 'disabledForeground'],
  failed: ['error', 'errorForeground'],
};

/** The tree view of the daemon's chats, one item per chat. */
export class ChatsView implements vscode.TreeDataProvider<ChannelSummary>, vscode.Disposable {
  private readonly view: vscode.TreeView<ChannelSummary>;
  private readonly changeEmitter = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changeEmitter.event;
  private roster: ChatRoster | undefined;
  private followed: SidecarClient | undefined;
  private rosterSubs: vscode.Disposable[] = [];
  private ticking: ReturnType<typeof setInterval> | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly host: ChatsHost) {
    this.view = vscode.window.createTreeView(CHATS_VIEW, { treeDataProvider: this, showCollapseAll: false });
    this.disposables.push(
      this.view,
      this.changeEmitter,
      this.view.onDidChangeVisibility(({ visible }) => this.visibility(visible)),
    );
    this.showMessage();
    // Activated by the view itself: it is in sight already, no visibility change comes.
    if (this.view.visible) this.visibility(true);
  }

  /** The window's client is `client` now (made, or made again after a daemon restart). */
  follow(client: SidecarClient | undefined): void {
    if (client === this.followed) return;
    this.followed = client;
    for (const s of this.rosterSubs) s.dispose();
    this.roster?.dispose();
    this.roster = undefined;
    this.rosterSubs = [];
    if (client) {
      const roster = new ChatRoster(client);
      this.roster = roster;
      this.rosterSubs = [
        roster.onDidChange(() => this.changed()),
        roster.onRequestWaiting(({ channel, request }) => {
          // Chats of this window ask in their tab; the list in sight shows the others.
          if (this.host.showsChannel(channel.channelId) || this.view.visible) return;
          const tool = request.displayName || request.toolName;
          void vscode.window
            .showInformationMessage(`Claude in ${folderName(channel)} waits for your answer: ${tool}`, 'Open the Chat')
            .then((pick) => (pick ? this.host.openChannel(channel) : undefined))
            .then(undefined, (e: unknown) => this.host.log.error(`opening the chat: ${(e as Error).message}`));
        }),
        client.onDaemonState(() => this.changed()),
      ];
      // Watched whenever a daemon runs (the badge counts then), and taken again on each connection.
      void roster.watch(this.view.visible && this.host.usesSharedDaemon()).catch((e: unknown) => {
        this.host.log.debug(`watching the chats: ${(e as Error).message}`);
      });
    }
    this.changed();
  }

  private visibility(visible: boolean): void {
    if (visible) {
      // Shown with the shared daemon: its chats (other windows' too) are worth a connection.
      if (this.host.usesSharedDaemon()) {
        this.follow(this.host.client); // made if not yet
        void this.roster
          ?.watch(true)
          .catch((e: unknown) => this.host.log.debug(`watching the chats: ${(e as Error).message}`));
      }
      // The "12 s ago" of each chat moves on while the list is in sight.
      this.ticking ??= setInterval(() => this.changeEmitter.fire(), 10_000);
    } else if (this.ticking) {
      clearInterval(this.ticking);
      this.ticking = undefined;
    }
  }

  /** The list afresh (the view's Refresh button). */
  async refresh(): Promise<void> {
    this.follow(this.host.client);
    await this.roster?.watch(true);
  }

  private changed(): void {
    const waiting = this.roster?.waiting() ?? 0;
    this.view.badge = waiting
      ? { value: waiting, tooltip: `${waiting} Claude chat${waiting === 1 ? '' : 's'} waiting for you` }
      : undefined;
    this.showMessage();
    this.changeEmitter.fire();
  }

  /** A daemon without watchChannels: said in the view (the welcome content says when none runs). */
  private showMessage(): void {
    this.view.message =
      this.roster?.supported === false
        ? 'This daemon does not list its chats (it lacks watchChannels): upgrade claude-sidecar to see them here.'
        : undefined;
  }

  /** The view's badge: how many chats wait for the user (undefined: none). */
  get badge(): number | undefined {
    return this.view.badge?.value;
  }

  getChildren(element?: ChannelSummary): ChannelSummary[] {
    if (element || !this.roster?.watching) return [];
    return this.roster.chats();
  }

  getTreeItem(channel: ChannelSummary): vscode.TreeItem {
    const look = isWaiting(channel) ? ({ rank: 1, label: 'waiting' } as const) : stateLook(channel);
    const worktree = channel.worktree ?? undefined;
    // A worktree chat by its worktree's name (its branch, worktree-<name>, is in the tooltip).
    const label = worktree ? worktree.name : folderName(channel);
    const item = new vscode.TreeItem(label, vscode.TreeItemCollapsibleState.None);
    item.id = channel.channelId;
    const [icon, color] = ICONS[look.label];
    item.iconPath = new vscode.ThemeIcon(icon, color ? new vscode.ThemeColor(color) : undefined);
    const at = lastEventAgo(channel, Date.now());
    const changes = worktree ? (channel.changes?.files ? changesText(channel.changes) : 'no changes yet') : undefined;
    // The side bar is narrow: the row leads with what tells the chats apart. A waiting chat
    // says what it asks for; "idle", the resting state, is left to the icon and the tooltip.
    const asks = (channel.pendingPermissions ?? []).map((r) => r.displayName || r.toolName);
    const state = look.label === 'waiting' && asks.length ? `waiting: ${asks.join(', ')}` : look.label;
    const changed = channel.changes?.files ? changes : undefined;
    item.description = [look.label === 'idle' ? undefined : state, changed, at, channel.lastPrompt ?? undefined]
      .filter(Boolean)
      .join(' · ');
    item.tooltip = this.tooltip(channel, label, look.label, changes, at);
    item.accessibilityInformation = {
      label: `${label}, ${[state, changed, at, channel.lastPrompt ?? undefined].filter(Boolean).join(', ')}`,
    };
    item.contextValue = worktree && this.host.client.features?.has('worktrees') ? 'chat-worktree' : 'chat';
    item.command = { command: 'claudeSidecar.openListedChat', title: 'Open the Chat', arguments: [channel] };
    return item;
  }

  /** The row's tooltip: the chat's name and state, what it asks, its branch and changes, where it
   * runs, and its last prompt. */
  private tooltip(
    channel: ChannelSummary,
    label: string,
    state: StateLook['label'],
    changes: string | undefined,
    at: string | undefined,
  ): vscode.MarkdownString {
    const tip = new vscode.MarkdownString(undefined, true);
    const line = (text: string) => tip.appendText(text).appendMarkdown('\n\n');
    tip.appendMarkdown('**').appendText(label).appendMarkdown('** ');
    line(`— ${state === 'waiting' ? 'waiting for your answer' : state}`);
    for (const request of channel.pendingPermissions ?? []) {
      line(`Asks: ${request.displayName || request.toolName}${request.description ? ` — ${request.description}` : ''}`);
    }
    const worktree = channel.worktree ?? undefined;
    if (worktree) {
      line(
        `Branch ${worktree.branch}, from ${worktree.baseBranch ?? worktree.baseRef}${changes ? `: ${changes}` : ''}`,
      );
    }
    line(channel.cwd);
    const about = [channel.model, at ? `last event ${at}` : undefined].filter(Boolean).join(' · ');
    if (about) line(about);
    if (channel.lastPrompt) line(`Last prompt: ${channel.lastPrompt}`);
    return tip;
  }

  /** Review: VS Code's multi-file diff editor over what the worktree chat changed since its base. */
  async review(channel: ChannelSummary): Promise<void> {
    const changes = await worktreeChanges(this.host.client, channel.channelId);
    if (changes.files.length === 0) {
      void vscode.window.showInformationMessage(`Claude: ${changes.worktree.branch} changed nothing yet.`);
      return;
    }
    const rows = await Promise.all(changes.files.map((f) => this.diffRow(changes.worktree, f)));
    // VS Code adds the number of files to the multi-file diff's title.
    const base = changes.worktree.baseBranch ?? changes.worktree.baseCommit.slice(0, 12);
    const title = `${changes.worktree.branch} vs ${base} (+${changes.added} −${changes.deleted})`;
    try {
      await vscode.commands.executeCommand('vscode.changes', title, rows);
    } catch (e) {
      // A VS Code without the multi-file diff editor: one diff per file.
      this.host.log.debug(`vscode.changes: ${(e as Error).message}`);
      const nothing = (file: vscode.Uri) => this.host.diffs.uriAt(file, 'none', '');
      for (const [file, before, after] of rows) {
        const name = `${title}: ${path.basename(file.path)}`;
        await vscode.commands.executeCommand('vscode.diff', before ?? nothing(file), after ?? nothing(file), name, {
          preview: false,
        });
      }
    }
  }

  /** One file's row of the multi-file diff: the file, its text at the base commit (none: added),
   * its text now (none: deleted). */
  private async diffRow(
    worktree: WorktreeInfo,
    file: WorktreeFile,
  ): Promise<[vscode.Uri, vscode.Uri | undefined, vscode.Uri | undefined]> {
    const onDisk = vscode.Uri.file(path.join(worktree.path, file.path));
    const before =
      file.status === 'added'
        ? undefined
        : this.host.diffs.uriAt(
            // A renamed file's base is at its old path: the multi-file diff shows the rename.
            vscode.Uri.file(path.join(worktree.path, file.oldPath ?? file.path)),
            'base',
            await gitShow(worktree.path, `${worktree.baseCommit}:${file.oldPath ?? file.path}`),
          );
    const after = file.status === 'deleted' ? undefined : onDisk;
    return [onDisk, before, after];
  }

  /** Merge: a strategy picked, then claude/mergeWorktree; a refusal shows the files it names. */
  async merge(channel: ChannelSummary): Promise<void> {
    const worktree = channel.worktree;
    if (!worktree) return;
    const target = worktree.baseBranch ?? worktree.baseRef;
    type Pick = vscode.QuickPickItem & { strategy: MergeWorktreeParams['strategy'] };
    const pick = await this.host.quickInputs.ask(() =>
      vscode.window.showQuickPick<Pick>(
        [
          { label: 'Merge', description: 'fast-forward, else a merge commit', strategy: 'merge' },
          { label: 'Squash', description: 'one commit with all the changes', strategy: 'squash' },
          { label: 'Rebase', description: "the branch's commits replayed on top", strategy: 'rebase' },
        ],
        { title: `Bring ${worktree.branch} into ${target}`, ignoreFocusOut: true },
      ),
    );
    if (!pick) return;
    const message = await this.commitMessage(channel, pick.strategy);
    if (message === null) return;
    try {
      const result = await mergeWorktree(this.host.client, {
        channelId: channel.channelId,
        strategy: pick.strategy,
        ...(message ? { message } : {}),
      });
      void vscode.window.showInformationMessage(
        `Claude: ${worktree.branch} is in ${result.target} (${pick.label.toLowerCase()}, ${result.files.length} file${result.files.length === 1 ? '' : 's'}).`,
      );
    } catch (e) {
      if (!(await this.showRefusal(e))) throw e;
    }
  }

  /**
   * The message of the commit a merge makes of the chat's work, as the user edited it: asked when
   * the chat left work uncommitted (it becomes a commit) or the merge squashes. Undefined: no
   * commit of the chat's work is made (the daemon's own merge message then); null: the user
   * cancelled.
   */
  private async commitMessage(
    channel: ChannelSummary,
    strategy: MergeWorktreeParams['strategy'],
  ): Promise<string | undefined | null> {
    const changes = await worktreeChanges(this.host.client, channel.channelId);
    const uncommitted = changes.files.filter((f) => f.uncommitted).length;
    if (!uncommitted && strategy !== 'squash') return undefined;
    // The daemon's default: the first line of the chat's first prompt (the tab's title).
    const open = this.host.client.allChats().find((c) => c.channelId === channel.channelId);
    const first =
      open?.prompts[0]?.text ?? channel.lastPrompt ?? `Work of the chat in worktree ${changes.worktree.name}`;
    const message = await this.host.quickInputs.ask(() =>
      vscode.window.showInputBox({
        title: `The commit message for ${changes.worktree.branch}`,
        prompt:
          strategy === 'squash'
            ? 'The one commit the squash makes of all its changes.'
            : `The commit of the ${uncommitted} file${uncommitted === 1 ? '' : 's'} the chat left uncommitted.`,
        value: first.trim().split('\n')[0]?.slice(0, 72) ?? '',
        ignoreFocusOut: true,
        validateInput: (text) => (text.trim() ? undefined : 'A commit needs a message.'),
      }),
    );
    return message === undefined ? null : message.trim();
  }

  /** Discard: the worktree, its branch and the chat removed after a confirmation; with work never
   * merged, a second confirmation that names it. */
  async discard(channel: ChannelSummary): Promise<void> {
    const worktree = channel.worktree;
    if (!worktree) return;
    const sure = await vscode.window.showWarningMessage(
      `Discard the worktree ${worktree.name}?`,
      { modal: true, detail: `The chat ends, and ${worktree.path} and the branch ${worktree.branch} are removed.` },
      'Discard',
    );
    if (sure !== 'Discard') return;
    try {
      await removeWorktree(this.host.client, channel.channelId);
    } catch (e) {
      if (!(e instanceof SidecarError) || e.errorName !== 'unmergedWork') throw e;
      const lost = refusalDetails(e.errorName, e.data);
      const anyway = await vscode.window.showWarningMessage(
        `${worktree.branch} has work that was never merged. Discard it anyway?`,
        { modal: true, detail: `This would be lost:\n${lost.join('\n')}` },
        'Discard Anyway',
      );
      if (anyway !== 'Discard Anyway') return;
      await removeWorktree(this.host.client, channel.channelId, true);
    }
    this.host.closeChannelTabs(channel.channelId);
  }

  /** A merge refused for a reason the user can act on: said with the files named. */
  private async showRefusal(e: unknown): Promise<boolean> {
    if (!(e instanceof SidecarError)) return false;
    const refusals = ['mergeConflict', 'uncommittedChanges', 'chatBusy', 'gitIdentityMissing'];
    if (!refusals.includes(e.errorName ?? '')) return false;
    const files = refusalDetails(e.errorName, e.data);
    // The command that sets a git identity, to paste into a terminal.
    const fix = e.errorName === 'gitIdentityMissing' ? (e.data as { fix?: unknown } | undefined)?.fix : undefined;
    const actions = typeof fix === 'string' ? ['Copy Command'] : [];
    const said = `${e.message.charAt(0).toUpperCase()}${e.message.slice(1)}`;
    const pick = await vscode.window.showErrorMessage(
      `Claude: nothing was merged. ${said}`,
      { modal: true, ...(files.length ? { detail: files.join('\n') } : {}) },
      ...actions,
    );
    if (pick === 'Copy Command' && typeof fix === 'string') await vscode.env.clipboard.writeText(fix);
    return true;
  }

  dispose(): void {
    if (this.ticking) clearInterval(this.ticking);
    for (const s of this.rosterSubs) s.dispose();
    this.roster?.dispose();
    for (const d of this.disposables) d.dispose();
  }
}

/** The chat's folder by its name ("shop"), for the list and its notices. */
function folderName(channel: ChannelSummary): string {
  return path.basename(channel.cwd) || channel.cwd;
}

/** A file's text at a commit (`git show <commit>:<path>` in `cwd`). */
function gitShow(cwd: string, spec: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('git', ['show', spec], { cwd, maxBuffer: 64 * 1024 * 1024 }, (error, stdout) =>
      error ? reject(new Error(`git show ${spec}: ${error.message}`)) : resolve(stdout),
    );
  });
}
