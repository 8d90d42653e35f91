// "Who needs you": every chat of the daemon in one list, kept current by claude/watchChannels
// and claude/channelsChanged (feature watchChannels), the chats waiting for the user first.
// What the Claude Chats view shows, and how a chat not open here that starts waiting for a
// permission is told of once. Pure TypeScript: no vscode.

import { Emitter, type Event } from 'vscode-jsonrpc/node';
import type { SidecarClient } from './client';
import type {
  ChannelsChangedNotification,
  ChannelSummary,
  MergeWorktreeParams,
  MergeWorktreeResult,
  PermissionRequest,
  RemoveWorktreeResult,
  WorktreeChangesResult,
  WorktreeTotals,
} from './protocol.generated';

/** How the list shows a chat's state: its group (lower first) and its word. */
export interface StateLook {
  rank: number;
  label: 'waiting' | 'running' | 'starting' | 'idle' | 'exited' | 'failed';
}

const LOOKS: Record<ChannelSummary['state'], StateLook> = {
  awaitingPermission: { rank: 1, label: 'waiting' },
  running: { rank: 2, label: 'running' },
  starting: { rank: 2, label: 'starting' },
  idle: { rank: 3, label: 'idle' },
  exited: { rank: 4, label: 'exited' },
};

/** A chat's state as the list shows it: a CLI that ended with an error or a signal "failed". */
export function stateLook(channel: ChannelSummary): StateLook {
  if (channel.state === 'exited' && channel.exit && (channel.exit.code !== 0 || channel.exit.signal !== null)) {
    return { rank: 4, label: 'failed' };
  }
  return LOOKS[channel.state];
}

/** Whether the chat waits for the user (a permission to answer). */
export function isWaiting(channel: ChannelSummary): boolean {
  return channel.state === 'awaitingPermission' || (channel.pendingPermissions?.length ?? 0) > 0;
}

function channelNumber(channel: ChannelSummary): number {
  const match = /(\d+)$/.exec(channel.channelId);
  return match ? Number(match[1]) : Number.MAX_SAFE_INTEGER;
}

/**
 * The chats in the list's order: waiting for the user, running, idle, exited; in each group
 * the oldest chat first (a running chat does not jump around as it works).
 */
export function sortedChats(channels: Iterable<ChannelSummary>): ChannelSummary[] {
  const rank = (c: ChannelSummary) => (isWaiting(c) ? 1 : stateLook(c).rank);
  return [...channels].sort(
    (a, b) => rank(a) - rank(b) || channelNumber(a) - channelNumber(b) || (a.channelId < b.channelId ? -1 : 1),
  );
}

/** "12 s ago", "3 min ago", "2 h ago", "4 d ago" for a time `seconds` before now. */
export function ago(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}

/** How long before `nowMs` the chat's last event was, in words; undefined when it had none. */
export function lastEventAgo(channel: ChannelSummary, nowMs: number): string | undefined {
  const at = channel.lastEventAt ? Date.parse(channel.lastEventAt) : NaN;
  return Number.isNaN(at) ? undefined : ago((nowMs - at) / 1000);
}

/** "+12 −3 in 2 files": what a worktree chat changed so far. */
export function changesText(changes: WorktreeTotals): string {
  return `+${changes.added} −${changes.deleted} in ${changes.files} file${changes.files === 1 ? '' : 's'}`;
}

/** A permission request of a chat, told once when it starts waiting. */
export interface WaitingRequest {
  channel: ChannelSummary;
  request: PermissionRequest;
}

/**
 * The daemon's chats, current while watched. The watch is taken by `watch()` and taken again
 * on each new connection (a shared daemon's connection dropped and made again: the daemon
 * watches per connection); the list is empty while there is no connection.
 */
export class ChatRoster {
  private readonly channels = new Map<string, ChannelSummary>();
  private readonly changeEmitter = new Emitter<void>();
  /** The list changed (chats, their states, or the watch began or ended). */
  readonly onDidChange: Event<void> = this.changeEmitter.event;
  private readonly waitingEmitter = new Emitter<WaitingRequest>();
  /** A permission request the list had not seen: fired once per request. */
  readonly onRequestWaiting: Event<WaitingRequest> = this.waitingEmitter.event;
  private told = new Set<string>();
  private wanted = false;
  /** The daemon sends claude/channelsChanged to this connection. */
  watching = false;
  private readonly subscriptions: { dispose(): void }[];

  constructor(private readonly client: SidecarClient) {
    this.subscriptions = [
      client.onChannelsChanged((params) => this.take(params)),
      client.onDaemonState((state) => {
        if (state === 'running') {
          // A new connection watches nothing yet.
          this.watching = false;
          if (this.wanted) void this.refresh().catch(() => undefined);
        } else if (this.watching || this.channels.size) {
          this.watching = false;
          this.channels.clear();
          this.changeEmitter.fire();
        }
      }),
    ];
  }

  /** Whether the daemon serves claude/watchChannels; undefined before a daemon answered. */
  get supported(): boolean | undefined {
    return this.client.features?.has('watchChannels');
  }

  /** The chats in the list's order (see sortedChats). */
  chats(): ChannelSummary[] {
    return sortedChats(this.channels.values());
  }

  /** The chat `channelId` as last told. */
  chat(channelId: string): ChannelSummary | undefined {
    return this.channels.get(channelId);
  }

  /** How many chats wait for the user. */
  waiting(): number {
    return [...this.channels.values()].filter(isWaiting).length;
  }

  /**
   * Keeps the list current from now on: starts the daemon if `start` (else waits for one to
   * run), asks for every chat and to be told of changes. Resolves once the list is read (or at
   * once when no daemon runs and `start` is false); rejects with the daemon's error.
   */
  async watch(start = true): Promise<void> {
    this.wanted = true;
    if (!start && this.client.state !== 'running') return;
    await this.refresh();
  }

  /** The list afresh (claude/watchChannels again). */
  async refresh(): Promise<void> {
    const daemon = await this.client.daemon();
    if (!this.client.features?.has('watchChannels')) return;
    const { channels } = await daemon.request('claude/watchChannels', {});
    if (!this.wanted) return;
    this.watching = true;
    this.channels.clear();
    for (const channel of channels) this.channels.set(channel.channelId, channel);
    this.tell();
    this.changeEmitter.fire();
  }

  /** Stops the watch (claude/watchChannels watch: false) and empties the list. */
  async unwatch(): Promise<void> {
    this.wanted = false;
    const was = this.watching;
    this.watching = false;
    this.channels.clear();
    this.changeEmitter.fire();
    if (was && this.client.state === 'running') {
      await (await this.client.daemon()).request('claude/watchChannels', { watch: false });
    }
  }

  private take(params: ChannelsChangedNotification): void {
    if (!this.watching) return; // sent before the watch was answered, or after it ended
    for (const channel of params.channels) this.channels.set(channel.channelId, channel);
    for (const id of params.closed) this.channels.delete(id);
    this.tell();
    this.changeEmitter.fire();
  }

  /** Fires onRequestWaiting for each pending request not told of yet; forgets answered ones. */
  private tell(): void {
    const pending = new Set<string>();
    const fresh: WaitingRequest[] = [];
    for (const channel of this.channels.values()) {
      for (const request of channel.pendingPermissions ?? []) {
        pending.add(request.requestId);
        if (!this.told.has(request.requestId)) fresh.push({ channel, request });
      }
    }
    this.told = pending;
    for (const w of fresh) this.waitingEmitter.fire(w);
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.changeEmitter.dispose();
    this.waitingEmitter.dispose();
  }
}

/** What a worktree chat changed against its base: files with status, counts and diffs. */
export async function worktreeChanges(client: SidecarClient, channelId: string): Promise<WorktreeChangesResult> {
  return (await client.daemon()).request('claude/worktreeChanges', { channelId });
}

/** Brings a worktree chat's branch into its base branch (refusals: SidecarError with the daemon's data). */
export async function mergeWorktree(client: SidecarClient, params: MergeWorktreeParams): Promise<MergeWorktreeResult> {
  return (await client.daemon()).request('claude/mergeWorktree', params);
}

/** Closes a worktree chat and removes its worktree and branch; `force` even with unmerged work. */
export async function removeWorktree(
  client: SidecarClient,
  channelId: string,
  force = false,
): Promise<RemoveWorktreeResult> {
  return (await client.daemon()).request('claude/removeWorktree', { channelId, ...(force ? { force } : {}) });
}

/** The files a refused merge or removal names, from the error's data, in words per kind. */
export function refusalDetails(errorName: string | undefined, data: unknown): string[] {
  const d = (data ?? {}) as { files?: unknown; commits?: unknown; uncommittedFiles?: unknown; fix?: unknown };
  const list = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  switch (errorName) {
    case 'mergeConflict':
      return list(d.files).map((f) => `conflict: ${f}`);
    case 'uncommittedChanges':
      return list(d.files).map((f) => `uncommitted in your checkout: ${f}`);
    case 'unmergedWork':
      return [
        ...list(d.commits).map((c) => `commit ${c}`),
        ...list(d.uncommittedFiles).map((f) => `uncommitted: ${f}`),
      ];
    case 'gitIdentityMissing':
      return typeof d.fix === 'string' ? [`in a terminal: ${d.fix}`] : [];
    default:
      return [];
  }
}

/** A worktree name from a prompt's first words: "Fix the login form!" -> "fix-the-login-form". */
export function worktreeNameFrom(prompt: string, words = 4): string {
  return prompt
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, words)
    .join('-');
}
