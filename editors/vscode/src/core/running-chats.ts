// Which of the shared daemon's running chats belong to this window. The daemon is per user:
// it runs the chats of every folder, and an attach list shows them all, this window's first.
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
