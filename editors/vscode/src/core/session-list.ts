// The stored sessions as the "Resume a Claude session" picker shows them.

import type { SessionSummary } from './protocol.generated';

/** A row of the session picker (a vscode.QuickPickItem plus the session it stands for). */
export interface SessionItem {
  label: string;
  description: string;
  detail: string;
  sessionId: string;
}

/** The picker's row for a stored session: its title, message count (not known yet for a
 * long session the daemon has not read whole: `partial`) and branch, when and which. */
export function sessionItem(session: SessionSummary, locale?: string): SessionItem {
  const count = session.partial ? 'not counted yet' : `${session.messageCount} messages`;
  return {
    label: session.customTitle || session.title || session.firstPrompt || session.sessionId,
    description: `${count}${session.gitBranch ? ` · ${session.gitBranch}` : ''}`,
    detail: `${new Date(session.updatedAt).toLocaleString(locale)} · ${session.sessionId}`,
    sessionId: session.sessionId,
  };
}
