// Which of the shared daemon's running chats belong to this window. The daemon is per user:
// it runs the chats of every folder. The attach list shows this window's, as the official
// extension's session list is the workspace's, and offers the others on request.
// Pure TypeScript: no vscode, no Node APIs but path's separator rules (passed in).

import type { ChannelSummary } from './protocol.generated';

/** The chats whose folder is one of `folders` or inside one, and the others; order kept. */
export function byWorkspace(
  channels: readonly ChannelSummary[],
  folders: readonly string[],
  separator = '/',
): { here: ChannelSummary[]; elsewhere: ChannelSummary[] } {
  const inside = (cwd: string): boolean =>
    folders.some((f) => cwd === f || cwd.startsWith(f.endsWith(separator) ? f : f + separator));
  return {
    here: channels.filter((c) => inside(c.cwd)),
    elsewhere: channels.filter((c) => !inside(c.cwd)),
  };
}

/** One heading of the attach list and its chats (no heading: the list has one group). */
export interface AttachGroup {
  heading?: 'This workspace' | 'Other folders';
  channels: ChannelSummary[];
}

/** What the attach list shows, and how many chats of other folders it leaves out. */
export interface AttachList {
  groups: AttachGroup[];
  /** Chats of other folders not shown: the list offers to show them. */
  hidden: number;
}

/**
 * The attach list: this workspace's running chats only, unless `all`; then the other
 * folders' too, under their own heading. With none running here the others are shown
 * (under "Other folders", so they are not taken for this workspace's); a window without
 * a folder shows every chat.
 */
export function attachList(
  channels: readonly ChannelSummary[],
  folders: readonly string[],
  all: boolean,
  separator = '/',
): AttachList {
  if (folders.length === 0) return { groups: [{ channels: [...channels] }], hidden: 0 };
  const { here, elsewhere } = byWorkspace(channels, folders, separator);
  if (here.length === 0) return { groups: [{ heading: 'Other folders', channels: elsewhere }], hidden: 0 };
  if (!all || elsewhere.length === 0) {
    return { groups: [{ heading: 'This workspace', channels: here }], hidden: elsewhere.length };
  }
  return {
    groups: [
      { heading: 'This workspace', channels: here },
      { heading: 'Other folders', channels: elsewhere },
    ],
    hidden: 0,
  };
}
