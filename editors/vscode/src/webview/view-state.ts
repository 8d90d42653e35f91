// What only the page knows and must keep when VS Code recreates it (the panel was hidden,
// the window reloaded): the draft, the scroll position, which blocks the user opened or
// closed. Kept with the webview API's setState; the host reads `sessionId`, `cwd`, `model`,
// `effort` and `permissionMode` of the same object to restore the panel's chat after a reload.

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
}

/** The key of a block that opens and closes: a tool call by its id, others by entry id. */
export function blockKey(kind: string, id: string | number): string {
  return `${kind}:${id}`;
}

export class ViewState {
  private state: PageState;
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
    };
  }

  get current(): Readonly<PageState> {
    return this.state;
  }

  isExpanded(key: string, byDefault: boolean): boolean {
    return this.state.expanded[key] ?? byDefault;
  }

  update(change: Partial<PageState>): void {
    Object.assign(this.state, change);
    // Typing and scrolling change it many times a second: save at most every 300 ms.
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.host.setState(this.state);
    }, 300);
  }

  /** Changes and saves at once: what the host reads back after a reload (the chat, its model). */
  save(change: Partial<PageState>): void {
    Object.assign(this.state, change);
    clearTimeout(this.timer);
    this.timer = undefined;
    this.host.setState(this.state);
  }

  setExpanded(key: string, open: boolean): void {
    this.update({ expanded: { ...this.state.expanded, [key]: open } });
  }
}
