// What only the page knows and must keep when VS Code recreates it (the panel was hidden,
// the window reloaded): the draft, the scroll position, which blocks the user opened or
// closed, and the diffs of the chat's edits (after a reload the daemon's stored entries carry
// each file's +N -M but no diff, and the host no longer has the before/after). Kept with the
// webview API's setState; the host reads `sessionId`, `cwd`, `model`, `effort` and
// `permissionMode` of the same object to restore the panel's chat after a reload.

import { IdSet } from '../core/id-map';
import type { Host } from './host';

export interface PageState {
  draft: string;
  /** Pixels from the top of the transcript; null: follow the end. */
  scrollTop: number | null;
  /** Blocks the user opened (true) or closed (false), by key (see `blockKey`). */
  expanded: Record<string, boolean>;
  sessionId?: string;
  cwd?: string;
  /** The chat's model and effort ('' if unknown): a reloaded chat resumes with them. */
  model?: string;
  effort?: string;
  /** The chat's permission mode ('' if unknown): a reloaded chat resumes in it. */
  permissionMode?: string;
  /** The diffs the page was sent (claude/fileUpdated), by tool use id, oldest first. */
  diffs: Record<string, SavedDiff[]>;
}

/** A file update's diff as the page saved it: shown again after a reload, as it was sent. */
export interface SavedDiff {
  path: string;
  diff: string;
}

/** The most diff text kept (oldest tool uses dropped first): VS Code stores the state with the workspace. */
export const SAVED_DIFF_CHARS = 256 * 1024;

function savedDiffs(value: unknown): Record<string, SavedDiff[]> {
  if (!value || typeof value !== 'object') return {};
  const out: Record<string, SavedDiff[]> = {};
  for (const [id, list] of Object.entries(value as Record<string, unknown>)) {
    if (!Array.isArray(list)) continue;
    const diffs = list.filter(
      (d): d is SavedDiff =>
        typeof (d as SavedDiff | null)?.path === 'string' && typeof (d as SavedDiff | null)?.diff === 'string',
    );
    if (diffs.length) out[id] = diffs;
  }
  return out;
}

/** The key of a block that opens and closes: a tool call by its id, others by entry id. */
export function blockKey(kind: string, id: string | number): string {
  return `${kind}:${id}`;
}

export class ViewState {
  private state: PageState;
  /** The tool uses with saved diffs: looked up for every tool call drawn, which a lookup in
   * `diffs` (an object) would put in V8's string table (core/id-map.ts). */
  private withDiffs: IdSet;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly host: Host) {
    const saved = host.getState() as Partial<PageState> | undefined;
    this.state = {
      draft: typeof saved?.draft === 'string' ? saved.draft : '',
      scrollTop: typeof saved?.scrollTop === 'number' ? saved.scrollTop : null,
      expanded: saved?.expanded && typeof saved.expanded === 'object' ? saved.expanded : {},
      ...(saved?.sessionId ? { sessionId: saved.sessionId } : {}),
      ...(saved?.cwd ? { cwd: saved.cwd } : {}),
      ...(typeof saved?.model === 'string' ? { model: saved.model } : {}),
      ...(typeof saved?.effort === 'string' ? { effort: saved.effort } : {}),
      ...(typeof saved?.permissionMode === 'string' ? { permissionMode: saved.permissionMode } : {}),
      diffs: savedDiffs(saved?.diffs),
    };
    this.withDiffs = new IdSet(Object.keys(this.state.diffs));
  }

  get current(): Readonly<PageState> {
    return this.state;
  }

  isExpanded(key: string, byDefault: boolean): boolean {
    return this.state.expanded[key] ?? byDefault;
  }

  update(change: Partial<PageState>): void {
    this.assign(change);
    // Typing and scrolling change it many times a second: save at most every 300 ms.
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.host.setState(this.state);
    }, 300);
  }

  /** Changes and saves at once: what the host reads back after a reload (the chat, its model). */
  save(change: Partial<PageState>): void {
    this.assign(change);
    clearTimeout(this.timer);
    this.timer = undefined;
    this.host.setState(this.state);
  }

  private assign(change: Partial<PageState>): void {
    Object.assign(this.state, change);
    if (change.diffs) this.withDiffs = new IdSet(Object.keys(change.diffs));
  }

  /** The saved diffs of one tool use. */
  diffsOf(toolUseId: string): SavedDiff[] {
    return this.withDiffs.has(toolUseId) ? (this.state.diffs[toolUseId] ?? []) : [];
  }

  /**
   * Keeps the diffs of these file updates (those of a tool use, with a diff) and saves at once
   * when one is new: a reload may come right after the edit. Past SAVED_DIFF_CHARS the oldest
   * tool uses' diffs go.
   */
  keepDiffs(updates: readonly { toolUseId?: string | null; path: string; diff: string | null }[]): void {
    const diffs = { ...this.state.diffs };
    let added = false;
    for (const u of updates) {
      if (!u.toolUseId || u.diff === null) continue;
      const list = diffs[u.toolUseId] ?? [];
      if (list.some((d) => d.path === u.path && d.diff === u.diff)) continue;
      diffs[u.toolUseId] = [...list, { path: u.path, diff: u.diff }];
      added = true;
    }
    if (!added) return;
    const ids = Object.keys(diffs);
    let size = ids.reduce((n, id) => n + diffs[id]!.reduce((m, d) => m + d.diff.length, 0), 0);
    for (const id of ids) {
      if (size <= SAVED_DIFF_CHARS) break;
      size -= diffs[id]!.reduce((m, d) => m + d.diff.length, 0);
      delete diffs[id];
    }
    this.save({ diffs });
  }

  setExpanded(key: string, open: boolean): void {
    this.update({ expanded: { ...this.state.expanded, [key]: open } });
  }
}
