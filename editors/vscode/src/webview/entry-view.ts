// What every transcript entry's view is: entry-views.ts makes one per entry (tool calls
// through tool-view.ts), transcript-view.ts keeps and updates them.

import type { Entry } from '../core/transcript';

export interface EntryView {
  readonly el: HTMLElement;
  /** Where a sub-agent's entries go, for the Agent/Task call that started it. */
  readonly children?: HTMLElement | null;
  update(entry: Entry): void;
}
