// The chat's conversation: the daemon's entries (docs/protocol.md, "The conversation")
// kept by id. The daemon computes every entry; this store only places them: `claude/entry`
// replaces the entry with its id or adds it in the order first seen, `claude/delta` appends
// to its `entryId`, and queued prompts are listed last until the CLI takes them up.
//
// It MUTATES the store (a delta costs O(delta)), which is plain JSON so that a copy
// survives postMessage's structured clone. Pure TypeScript: no DOM, no vscode, no Node APIs.
// What else the chat keeps (status, permission requests, cost, file updates) and the events
// that change it are in chat-state.ts.

import type { DeltaNotification, EntryNotification, PromptEntry } from './protocol.generated';

/** An entry of the daemon's conversation. */
export type ConversationEntry = EntryNotification['entry'];
export type { NoticeEntry, PromptEntry, TextEntry, ThinkingEntry, ToolEntry, TurnEntry } from './protocol.generated';

/** A file a rewind restored (claude/fileUpdated without a tool use): the client's own entry. */
export interface RestoredFileEntry {
  kind: 'restoredFile';
  id: string;
  seq: number;
}

export type Entry = ConversationEntry | RestoredFileEntry;

export interface Transcript {
  /** The conversation in the order each entry was first seen (queued prompts aside). */
  entries: Entry[];
  /** Prompts sent while a turn runs, listed after the entries until the CLI takes them up. */
  queued: PromptEntry[];
  /** Entry id -> its position in `entries`. */
  at: Record<string, number>;
  /** Entry id -> `rev` when it last changed: a view redraws the entries newer than it drew. */
  revs: Record<string, number>;
  /** The store's revision now (its owner bumps it for every event). */
  rev: number;
}

/** Replaces the entry with the same id or adds it (a copy: deltas append to it). */
export function upsert(store: Transcript, incoming: Entry): void {
  const entry = { ...incoming };
  store.revs[entry.id] = store.rev;
  const at = store.at[entry.id];
  const queuedAt = store.queued.findIndex((q) => q.id === entry.id);
  if (entry.kind === 'prompt' && entry.queued) {
    if (queuedAt >= 0) store.queued[queuedAt] = entry;
    else if (at === undefined) store.queued.push(entry);
    else store.entries[at] = entry;
    return;
  }
  if (queuedAt >= 0) store.queued.splice(queuedAt, 1); // taken up: it moves to the end
  if (at !== undefined) {
    store.entries[at] = entry;
  } else {
    store.at[entry.id] = store.entries.length;
    store.entries.push(entry);
  }
}

/** Adds `incoming` (a new id) just before the entry `beforeId` (the entries after it move down one). */
export function insertBefore(store: Transcript, incoming: Entry, beforeId: string): void {
  const at = store.at[beforeId];
  if (at === undefined || incoming.id in store.at) {
    upsert(store, incoming);
    return;
  }
  store.revs[incoming.id] = store.rev;
  store.entries.splice(at, 0, { ...incoming });
  for (let i = at; i < store.entries.length; i++) store.at[store.entries[i]!.id] = i;
}

/**
 * The prompt of the turn still running: the last prompt of the main conversation (not a
 * sub-agent's) with no turn footer after it; none when the last turn ended.
 */
export function runningTurnPrompt(store: Transcript): PromptEntry | undefined {
  for (let i = store.entries.length - 1; i >= 0; i--) {
    const entry = store.entries[i]!;
    if (entry.kind === 'turn') return undefined;
    if (entry.kind === 'prompt' && !entry.parentId) return entry;
  }
  return undefined;
}

/** Appends a delta's text to its entry (text, thinking, or a tool's input); one naming no
 * entry of the store changes nothing. */
export function appendDelta(store: Transcript, delta: DeltaNotification): void {
  const entry = store.entries[store.at[delta.entryId ?? ''] ?? -1];
  if (entry?.kind === 'tool') entry.partialInput = (entry.partialInput ?? '') + delta.text;
  else if (entry?.kind === 'text' || entry?.kind === 'thinking') entry.text += delta.text;
  if (entry) store.revs[entry.id] = store.rev;
}

/** Marks an entry as changed (something it shows changed outside it, e.g. its diff came). */
export function touch(store: Transcript, id: string): void {
  if (id in store.at) store.revs[id] = store.rev;
}

/**
 * Takes a page of the conversation that reaches its end (claude/getTranscript or an attach
 * answer: the last page, or every entry), oldest first, as current as the notifications
 * applied so far. Each of its entries replaces what the store has of it and is placed in
 * the page's order; what the store has that the page lacks stays where it was: entries
 * older than the page (pages read before) ahead of it, the client's own entries (notices)
 * after the page entry they followed. Queued prompts go to `queued`. Returns the page's
 * conversation entries (without the queued prompts), as placed.
 */
export function mergeTail(store: Transcript, incoming: readonly Entry[]): Entry[] {
  const page = incoming.filter((e) => !(e.kind === 'prompt' && e.queued)).map((e) => ({ ...e }));
  const ids = new Set(page.map((e) => e.id));
  const before: Entry[] = [];
  const following = new Map<string, Entry[]>();
  let anchor: string | undefined;
  for (const entry of store.entries) {
    if (ids.has(entry.id)) anchor = entry.id;
    else if (anchor === undefined) before.push(entry);
    else following.set(anchor, [...(following.get(anchor) ?? []), entry]);
  }
  const entries = before;
  for (const entry of page) {
    store.revs[entry.id] = store.rev;
    entries.push(entry, ...(following.get(entry.id) ?? []));
  }
  store.entries = entries;
  store.queued = store.queued.filter((q) => !ids.has(q.id));
  reindex(store);
  for (const entry of incoming) if (entry.kind === 'prompt' && entry.queued) upsert(store, entry);
  return page;
}

/**
 * Places a page of older entries (oldest first) just before the entry `beforeId`, the first
 * of the page read before it (at the start when the store lacks it). An entry the store has
 * already (it changed while the page was on its way, or a page was read again on a new
 * channel) moves to its place in the page and takes the page's contents: every entry is
 * listed once. Returns the page's entries as placed.
 */
export function placePage(store: Transcript, incoming: readonly Entry[], beforeId: string | null): Entry[] {
  const page = incoming.filter((e) => !(e.kind === 'prompt' && e.queued)).map((e) => ({ ...e }));
  if (!page.length) return page;
  const ids = new Set(page.map((e) => e.id));
  const kept = page.some((e) => e.id in store.at) ? store.entries.filter((e) => !ids.has(e.id)) : store.entries;
  const found = beforeId === null ? -1 : kept.findIndex((e) => e.id === beforeId);
  const at = Math.max(found, 0);
  kept.splice(at, 0, ...page);
  store.entries = kept;
  for (const entry of page) store.revs[entry.id] = store.rev;
  reindex(store);
  return page;
}

/** Sets `at` anew (the entries moved). */
function reindex(store: Transcript): void {
  store.at = {};
  for (let i = 0; i < store.entries.length; i++) store.at[store.entries[i]!.id] = i;
}

/** The entries in the order a view lists them: the conversation, then the queued prompts. */
export function listed(store: Transcript): Entry[] {
  return [...store.entries, ...store.queued];
}
