// What the host posts to one chat page, coalesced per frame. Every postMessage to a webview
// is a structured clone, a trip through VS Code's IPC and a task on the page's thread; a fast
// answer posted event by event makes the page fall behind (its turnEnded late by up to
// seconds while the user types: issue 43). So the chat's events wait here and go as one
// `events` message at most once per frame (streamed text alone, coming slowly, at most every
// TEXT_FRAME_MS): the first event after a quiet frame goes at the next turn of the event
// loop, the end of a turn (claude/turnEnded, the turn's footer, then idle) as soon as it is
// whole, in one message, and consecutive deltas of one block go as one delta (their text
// joined). Every event keeps its place and the host's `rev` after it,
// so the page's copy of the state is the host's (chat-state.ts). Any other message first
// sends the events before it, in order; a `reset` drops them instead (the state it carries
// already has them). No `vscode` import: the page bench drives it too.
//
// The page says when it got each batch (`received`), and no more than IN_FLIGHT batches are
// on their way at once: when the window's thread falls behind (a busy machine), VS Code's
// channel to it would otherwise fill with a frame's batch every 16 ms, which it then goes
// through one by one, the turn's end last, seconds late. Held back, the events gather into
// the next batch instead, which goes when the page caught up; the end of a turn goes
// without waiting for the page, behind at most IN_FLIGHT batches.
//
// A text or thinking entry that finished streaming comes once more whole (claude/entry):
// when its text is the one the page has from the entry's deltas, it goes without it
// (`textKept`): a 60 KB answer's text is not sent again in the message with the turn's end.

import type { ChatEvent } from '../core/chat-state';
import type { DeltaNotification } from '../core/protocol.generated';
import type { HostMessage, RevEvent } from '../shared/webview-messages';

/** A frame at 60 Hz: the page draws at most this often, so events need not come faster. */
export const FRAME_MS = 16;

/**
 * Streamed text alone, coming slowly (less than TEXT_BATCH_CHARS waiting), goes at most this
 * often: text read as it streams looks the same at 20 updates a second, and each batch the page
 * draws costs the window's thread and the browser's compositor a frame. In code-server, a 60 KB
 * answer paced over 11 s (page bench --delay-ms 3, no typing) took the renderer 8.0 s and the
 * browser 5.3 s of CPU at a batch a frame; at most every 50 ms, 5.3 s and 3.6 s, the end on
 * screen 134 -> 73 ms after turnEnded.
 */
export const TEXT_FRAME_MS = 50;

/** Streamed text waiting past which the stream counts as fast: it goes at the frame's pace
 * (a fast answer's batches then come as before, the page drawing them as they come). */
export const TEXT_BATCH_CHARS = 400;

/** Batches the page may have on their way to it (posted, not yet `received`). */
export const IN_FLIGHT = 2;

/**
 * How long `claude/turnEnded` waits for the rest of the turn's end: the daemon sends it, the
 * turn's footer (its `turn` entry) and `idle` one after the other, which the client takes one
 * at a turn of the event loop (vscode-jsonrpc). Sent on its own, turnEnded went first and the
 * footer, which the end on screen needs, a message's whole way later (6-434 ms in code-server
 * on a busy machine: each message is a trip through VS Code's webview messaging). `idle`
 * sends them at once; without it, they go at the next turn of the event loop's timers.
 */
export const END_WAIT_MS = 0;

/** How long the feed waits for the page to say it got a batch before it sends the next anyway
 * (a page that is gone says nothing until it is back with `ready`; the events then go in
 * large batches, not all kept here). */
export const PATIENCE_MS = 1000;

/** Runs `run` after `ms` (0: at the next turn of the event loop); the returned function cancels it. */
export type Schedule = (run: () => void, ms: number) => () => void;

const timers: Schedule = (run, ms) => {
  const timer = setTimeout(run, ms);
  return () => clearTimeout(timer);
};

export class PageFeed {
  private pending: RevEvent[] = [];
  private cancel: (() => void) | undefined;
  /** When the last batch went (the clock of `now`), for the frame's pacing. */
  private lastFlush = -Infinity;
  /** Batches posted that the page has not said it received. */
  private unreceived = 0;
  /** A turn's end is waiting (END_WAIT_MS, whatever is on its way to the page). */
  private endDue = false;
  /** The timer armed is at the pace of slow text (TEXT_FRAME_MS): anything else sooner. */
  private textPaced = false;
  /** The text the page has (with the events given so far) of each text or thinking entry
   * that streams, by entry id: its entry's, then its deltas'. */
  private readonly streamed = new Map<string, string>();

  constructor(
    private readonly post: (message: HostMessage) => void,
    private readonly schedule: Schedule = timers,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** One event the host applied, its state's `rev` then. */
  event(event: ChatEvent, rev: number): void {
    const kept = this.follow(event);
    const last = this.pending.at(-1);
    if (last && isDelta(last.event) && isDelta(event) && sameBlock(last.event.params, event.params)) {
      // A new object: the event itself is the chat's listeners' too.
      const params = { ...last.event.params, seq: event.params.seq, text: last.event.params.text + event.params.text };
      last.event = { ...last.event, params };
      last.rev = rev;
    } else {
      this.pending.push(kept ? { event: kept, rev, textKept: true } : { event, rev });
    }
    if (closes(event)) {
      this.flush();
      return;
    }
    if (isTurnEnded(event)) {
      this.endDue = true;
      this.arm();
      return;
    }
    // Armed for slow text: more text, or another event, may not wait that long.
    if (!this.cancel || (this.textPaced && !this.slowTextOnly())) this.arm();
  }

  /** The page got a batch: the events waiting may go (at the frame's pace). */
  received(): void {
    this.unreceived = Math.max(0, this.unreceived - 1);
    if (this.pending.length) this.arm();
  }

  /** Sends the events waiting when the frame is over (TEXT_FRAME_MS after the last batch for
   * slow text alone), or, while the page has IN_FLIGHT batches on their way, when it gets one
   * (PATIENCE_MS at most). */
  private arm(): void {
    this.cancel?.();
    const paced = !this.endDue && this.unreceived < IN_FLIGHT;
    this.textPaced = paced && this.slowTextOnly();
    const wait = this.endDue
      ? END_WAIT_MS
      : !paced
        ? PATIENCE_MS
        : Math.max(0, this.lastFlush + (this.textPaced ? TEXT_FRAME_MS : FRAME_MS) - this.now());
    this.cancel = this.schedule(() => {
      this.cancel = undefined;
      this.flush();
    }, wait);
  }

  /**
   * Follows the texts that stream (as the page's copy of the state will have them) and
   * returns the event without its text when it is a finished entry whose text the page has.
   */
  private follow(event: ChatEvent): ChatEvent | undefined {
    if (isDelta(event)) {
      const id = event.params.entryId ?? '';
      const text = this.streamed.get(id);
      if (text !== undefined) this.streamed.set(id, text + event.params.text);
      return undefined;
    }
    if (event.kind === 'snapshot' || event.kind === 'olderPage') {
      // Entries replaced wholesale: what streams is no longer known here (its end goes whole).
      this.streamed.clear();
      return undefined;
    }
    if (event.kind !== 'notification' || event.method !== 'claude/entry') return undefined;
    const entry = event.params.entry;
    if (entry.kind !== 'text' && entry.kind !== 'thinking') return undefined;
    if (entry.streaming) {
      this.streamed.set(entry.id, entry.text);
      return undefined;
    }
    const had = this.streamed.get(entry.id);
    this.streamed.delete(entry.id);
    if (had !== entry.text || !had) return undefined;
    return { ...event, params: { ...event.params, entry: { ...entry, text: '' } } };
  }

  /** Only deltas wait, with less than TEXT_BATCH_CHARS of text in all (a slow stream's). */
  private slowTextOnly(): boolean {
    let chars = 0;
    for (const { event } of this.pending) {
      if (!isDelta(event)) return false;
      chars += event.params.text.length;
    }
    return chars < TEXT_BATCH_CHARS;
  }

  /** Any other message: the events before it go first. */
  send(message: HostMessage): void {
    this.flush();
    this.post(message);
  }

  /** The whole state: the events waiting are in it already. */
  reset(message: Extract<HostMessage, { type: 'reset' }>): void {
    // The texts streaming are in the state it carries; no longer followed (their ends go whole).
    this.drop();
    // A new page (or one that starts over): nothing is on its way to it.
    this.unreceived = 0;
    this.post(message);
  }

  /** Posts the events waiting, if any, as one message. */
  flush(): void {
    this.cancel?.();
    this.cancel = undefined;
    this.endDue = false;
    this.textPaced = false;
    if (!this.pending.length) return;
    const events = this.pending;
    this.pending = [];
    this.lastFlush = this.now();
    this.unreceived++;
    this.post({ type: 'events', events, postedAt: performance.timeOrigin + performance.now() });
  }

  /** Forgets the events waiting (the page is gone or gets the whole state). */
  drop(): void {
    this.cancel?.();
    this.cancel = undefined;
    this.endDue = false;
    this.textPaced = false;
    this.pending = [];
    this.streamed.clear();
  }
}

type DeltaEvent = { kind: 'notification'; method: 'claude/delta'; params: DeltaNotification };

function isDelta(event: ChatEvent): event is DeltaEvent {
  return event.kind === 'notification' && event.method === 'claude/delta';
}

/** Two deltas of the same block (entry, kind, index and sub-agent): one after the other, the page may take them as one. */
function sameBlock(a: DeltaNotification, b: DeltaNotification): boolean {
  return (
    (a.entryId ?? null) === (b.entryId ?? null) &&
    a.kind === b.kind &&
    a.index === b.index &&
    (a.parentToolUseId ?? null) === (b.parentToolUseId ?? null)
  );
}

/** The end of a turn's events (`idle`) or of the CLI: what the user waits to see, sent without waiting. */
function closes(event: ChatEvent): boolean {
  if (event.kind !== 'notification' || event.method !== 'claude/status') return false;
  return event.params.state === 'idle' || event.params.state === 'exited';
}

/** The first of a turn's end: its footer and idle follow. */
function isTurnEnded(event: ChatEvent): boolean {
  return event.kind === 'notification' && event.method === 'claude/turnEnded';
}
