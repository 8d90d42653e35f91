// The chat's conversation: the daemon's entries (docs/protocol.md, "The conversation")
// kept by id. The daemon computes every entry; this store only places them: `claude/entry`
// replaces the entry with its id or adds it in the order first seen, `claude/delta` appends
// to its `entryId`, and queued prompts are listed last until the CLI takes them up.
//
// It MUTATES the store (a delta costs O(delta)). Its entries are plain JSON, its indexes
// are not: a page gets the store as toMessage gives it. Pure TypeScript: no DOM, no vscode,
// no Node APIs. What else the chat keeps (status, permission requests, cost, file updates)
// and the events that change it are in chat-state.ts.

import { IdMap, IdSet } from './id-map';
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

/**
 * An entry a copy of the store keeps by id alone: the page's, for the entries far from what
 * it draws (a decoded entry of a 100,000-entry chat held for nothing costs the page's GC its
 * pauses: issue 43). Its kind and the Agent/Task call it was made under place it; what it
 * shows is the host's (entriesOf), asked for again when it is drawn.
 */
export interface FarEntry {
  kind: 'far';
  id: string;
  /** The kind of the entry it stands for. */
  of: Entry['kind'];
  parentId?: string;
}

/** An entry as a store holds it: whole, or by id alone (only a page's copy). */
export type HeldEntry = Entry | FarEntry;

export interface Transcript {
  /** The conversation in the order each entry was first seen (queued prompts aside). */
  entries: HeldEntry[];
  /** Prompts sent while a turn runs, listed after the entries until the CLI takes them up. */
  queued: PromptEntry[];
  /** Entry id -> its position in `entries` less `shift` (positionOf): a page placed above
   * moves every entry after it by adding to `shift`, not by writing each one's anew. An
   * IdMap, as every index of ids here: an object's keys, a Map's or a Set's go into V8's
   * string table, which each major GC of the page walks (id-map.ts). */
  at: IdMap<number>;
  /** What to add to `at` for an entry's position. */
  shift: number;
  /** Entry id -> `rev` when it last changed: a view redraws the entries newer than it drew. */
  revs: IdMap<number>;
  /** The store's revision now (its owner bumps it for every event). */
  rev: number;
  /** The ids of the entries changed (or added) since a view last took them, when a view keeps
   * it (the page's copy sets it; the host's has none): the view visits these, not every entry. */
  changed?: string[];
}

/** The position of the entry `id` in `entries`; undefined when the store lacks it. */
export function positionOf(store: Transcript, id: string): number | undefined {
  const at = store.at.get(id);
  return at === undefined ? undefined : at + store.shift;
}

/** The kind of what an entry held stands for. */
export function kindOf(entry: HeldEntry): Entry['kind'] {
  return entry.kind === 'far' ? entry.of : entry.kind;
}

/** The Agent/Task call an entry held was made under (a sub-agent's entries), if any. */
export function parentOf(entry: HeldEntry): string | undefined {
  return entry.kind === 'restoredFile' ? undefined : (entry.parentId ?? undefined);
}

/** The kinds as the script's own constants: an entry's `kind` came through a structured clone,
 * a string of its own for every entry, which a far entry would keep (100,000 of them). */
const KINDS: { readonly [K in Entry['kind']]: K } = {
  prompt: 'prompt',
  text: 'text',
  thinking: 'thinking',
  tool: 'tool',
  notice: 'notice',
  turn: 'turn',
  restoredFile: 'restoredFile',
};

/** The entry held by id alone. */
export function farOf(entry: HeldEntry): FarEntry {
  if (entry.kind === 'far') return entry;
  const of = KINDS[entry.kind];
  const parentId = parentOf(entry);
  return parentId === undefined ? { kind: 'far', id: entry.id, of } : { kind: 'far', id: entry.id, of, parentId };
}

/** Keeps the entries `ids` by id alone (their contents go); returns how many were let go. */
export function release(store: Transcript, ids: Iterable<string>): number {
  let count = 0;
  for (const id of ids) {
    const at = positionOf(store, id);
    const entry = at === undefined ? undefined : store.entries[at];
    if (!entry || entry.kind === 'far') continue;
    store.entries[at!] = farOf(entry);
    count++;
  }
  return count;
}

/** The entries of `ids` the store holds whole (the host's answer to a page drawing them again). */
export function entriesOf(store: Transcript, ids: readonly string[]): Entry[] {
  const found: Entry[] = [];
  for (const id of ids) {
    const entry = store.entries[positionOf(store, id) ?? -1];
    if (entry && entry.kind !== 'far') found.push(entry);
  }
  return found;
}

/**
 * Puts the whole entries `incoming` in place of those the store keeps by id alone (an entry
 * held whole is as current already: what changed it came before them); returns the ids filled.
 */
export function fill(store: Transcript, incoming: readonly Entry[]): string[] {
  const filled: string[] = [];
  for (const entry of incoming) {
    const at = positionOf(store, entry.id);
    if (at === undefined || store.entries[at]!.kind !== 'far') continue;
    store.entries[at] = { ...entry };
    filled.push(entry.id);
  }
  return filled;
}

/**
 * A store as a message carries it to a page (VS Code's webview messaging is JSON: no Map):
 * its last `keep` entries whole and the others by id alone (the page asks for those it draws:
 * a long chat is not decoded there whole), its revs as pairs, and no index (the page makes
 * its own: `fromMessage`).
 */
export type SentTranscript<T extends Transcript> = Omit<T, 'at' | 'shift' | 'revs'> & { revs: [string, number][] };

/** `store` as a message carries it (SentTranscript), its last `keep` entries whole. */
export function toMessage<T extends Transcript>(store: T, keep: number): SentTranscript<T> {
  const { at, shift, revs, ...rest } = store;
  const from = Math.max(0, store.entries.length - keep);
  const entries = from ? store.entries.map((e, i) => (i < from ? farOf(e) : e)) : store.entries;
  return { ...rest, entries, revs: [...revs] };
}

/** The store a message carried (toMessage), its index made again. */
export function fromMessage<T extends Transcript>(sent: SentTranscript<T>): T {
  const store = { ...sent, at: new IdMap(), shift: 0, revs: new IdMap(sent.revs) } as unknown as T;
  reindex(store);
  return store;
}

/**
 * A prompt the client shows before it could send it (sent while a resumed chat's channel
 * opens): listed with the queued prompts, marked as waiting for Claude to start, until the
 * daemon's entry for it (the same id: it is sent with it as its `uuid`) replaces it.
 */
export interface WaitingPrompt extends PromptEntry {
  queued: true;
  waitingForStart: true;
}

export function isWaitingPrompt(entry: HeldEntry): entry is WaitingPrompt {
  return entry.kind === 'prompt' && entry.queued === true && entry.waitingForStart === true;
}

/** Takes the queued prompt `id` out of the store; returns it (undefined: the store lists no such prompt). */
export function dropQueued(store: Transcript, id: string): PromptEntry | undefined {
  const at = store.queued.findIndex((q) => q.id === id);
  if (at < 0) return undefined;
  store.revs.delete(id);
  return store.queued.splice(at, 1)[0];
}

/** Notes that the entry `id` changed now: its rev, and the view's list of changed ids. */
function changed(store: Transcript, id: string): void {
  store.revs.set(id, store.rev);
  store.changed?.push(id);
}

/** Replaces the entry with the same id or adds it (a copy: deltas append to it). */
export function upsert(store: Transcript, incoming: Entry): void {
  const entry = { ...incoming };
  changed(store, entry.id);
  const at = positionOf(store, entry.id);
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
    store.at.set(entry.id, store.entries.length - store.shift);
    store.entries.push(entry);
  }
}

/** Adds `incoming` (a new id) just before the entry `beforeId` (the entries after it move down one). */
export function insertBefore(store: Transcript, incoming: Entry, beforeId: string): void {
  const at = positionOf(store, beforeId);
  if (at === undefined || store.at.has(incoming.id)) {
    upsert(store, incoming);
    return;
  }
  changed(store, incoming.id);
  insertAt(store, at, [{ ...incoming }]);
}

/**
 * Inserts `added` (ids the store lacks) at position `at` and keeps `at` (the index) right by
 * writing the fewer side anew: the entries before `at`, with `shift` moving those after it
 * (a page placed at the top costs its own length, whatever the store holds), or the entries
 * after it (a notice near the end).
 */
function insertAt(store: Transcript, at: number, added: HeldEntry[]): void {
  store.entries.splice(at, 0, ...added);
  const end = at + added.length;
  const above = at < store.entries.length - end;
  if (above) store.shift += added.length;
  const [from, to] = above ? [0, end] : [at, store.entries.length];
  for (let i = from; i < to; i++) store.at.set(store.entries[i]!.id, i - store.shift);
  reindexed.count += to - from;
}

/**
 * The id of the prompt of the turn still running: the last prompt of the main conversation
 * (not a sub-agent's) with no turn footer after it; none when the last turn ended.
 */
export function runningTurnPrompt(store: Transcript): string | undefined {
  for (let i = store.entries.length - 1; i >= 0; i--) {
    const entry = store.entries[i]!;
    const kind = kindOf(entry);
    if (kind === 'turn') return undefined;
    if (kind === 'prompt' && parentOf(entry) === undefined) return entry.id;
  }
  return undefined;
}

/** Appends a delta's text to its entry (text, thinking, or a tool's input); one naming no
 * entry of the store changes nothing. */
export function appendDelta(store: Transcript, delta: DeltaNotification): void {
  const entry = store.entries[positionOf(store, delta.entryId ?? '') ?? -1];
  if (entry?.kind === 'tool') entry.partialInput = (entry.partialInput ?? '') + delta.text;
  else if (entry?.kind === 'text' || entry?.kind === 'thinking') entry.text += delta.text;
  if (entry) changed(store, entry.id);
}

/** Marks an entry as changed (something it shows changed outside it, e.g. its diff came). */
export function touch(store: Transcript, id: string): void {
  if (store.at.has(id)) changed(store, id);
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
  const ids = new IdSet(page.map((e) => e.id));
  const before: HeldEntry[] = [];
  const following = new IdMap<HeldEntry[]>();
  let anchor: string | undefined;
  for (const entry of store.entries) {
    if (ids.has(entry.id)) anchor = entry.id;
    else if (anchor === undefined) before.push(entry);
    else following.set(anchor, [...(following.get(anchor) ?? []), entry]);
  }
  const entries = before;
  for (const entry of page) {
    changed(store, entry.id);
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
  for (const entry of page) changed(store, entry.id);
  if (!page.some((e) => store.at.has(e.id))) {
    // The usual page: new entries only, placed without a look at the entries after them.
    insertAt(store, beforeId === null ? 0 : (positionOf(store, beforeId) ?? 0), page);
    return page;
  }
  const ids = new IdSet(page.map((e) => e.id));
  const kept = store.entries.filter((e) => !ids.has(e.id));
  const found = beforeId === null ? -1 : kept.findIndex((e) => e.id === beforeId);
  kept.splice(Math.max(found, 0), 0, ...page);
  store.entries = kept;
  reindex(store);
  return page;
}

/** Sets `at` anew (the entries moved). */
function reindex(store: Transcript): void {
  store.at = new IdMap();
  store.shift = 0;
  for (let i = 0; i < store.entries.length; i++) store.at.set(store.entries[i]!.id, i);
  reindexed.count += store.entries.length;
}

/** How many index entries (`at`) were written so far: what placing entries cost, for tests. */
export const reindexed = { count: 0 };

/**
 * The conversation's entries changed (or added) since the last call, each once and in their
 * order, and empties the list of them: what a view has to redraw, however many entries it
 * drew before. Every entry when the store keeps no list (`changed`).
 */
export function takeChanged(store: Transcript): HeldEntry[] {
  const ids = store.changed;
  if (!ids) return store.entries;
  store.changed = [];
  const positions = new Set<number>();
  for (const id of ids) {
    const at = positionOf(store, id);
    if (at !== undefined) positions.add(at);
  }
  return [...positions].sort((a, b) => a - b).map((at) => store.entries[at]!);
}

/** The entries in the order a view lists them: the conversation, then the queued prompts. */
export function listed(store: Transcript): HeldEntry[] {
  return [...store.entries, ...store.queued];
}
