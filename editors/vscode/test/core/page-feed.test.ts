// The host's feed of one chat page (src/extension/page-feed.ts): the chat's events coalesced
// per frame. A hand-run schedule and clock stand in for the timers, so nothing here depends
// on timing: a test says when the frame is over.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { initialState, reduce, type ChatEvent, type ChatState } from '../../src/core/chat-state';
import {
  END_WAIT_MS,
  FRAME_MS,
  IN_FLIGHT,
  PageFeed,
  PATIENCE_MS,
  TEXT_BATCH_CHARS,
  TEXT_FRAME_MS,
} from '../../src/extension/page-feed';
import { applyOnPage, type HostMessage, type RevEvent } from '../../src/shared/webview-messages';
import { entriesOf, fill, fromMessage, release, toMessage } from '../../src/core/transcript';
import { hostEvents, streamNames, withPositions, type StreamName } from './fixtures';

/** A feed whose timer runs when the test says, with the host's state it feeds from. */
function feed() {
  const posted: HostMessage[] = [];
  const timers: { run: () => void; ms: number; cancelled: boolean }[] = [];
  let clock = 0;
  const state = initialState();
  const pageFeed = new PageFeed(
    (m) => posted.push(structuredClone(m)),
    (run, ms) => {
      const timer = { run, ms, cancelled: false };
      timers.push(timer);
      return () => (timer.cancelled = true);
    },
    () => clock,
  );
  return {
    posted,
    state,
    /** The host applies the event, then hands it to the feed (as the panel does). */
    apply(event: ChatEvent) {
      pageFeed.event(event, reduce(state, event).rev);
    },
    feed: pageFeed,
    /** The timers armed and not cancelled. */
    armed: () => timers.filter((t) => !t.cancelled),
    /** Lets `ms` pass and runs the timers due. */
    pass(ms: number) {
      clock += ms;
      for (const t of timers.splice(0)) if (!t.cancelled) t.run();
    },
    /** The events of every `events` message so far, in order. */
    sent: () => posted.flatMap((m) => (m.type === 'events' ? m.events : [])),
  };
}

function delta(entryId: string, text: string, seq: number, index = 0): ChatEvent {
  return {
    kind: 'notification',
    method: 'claude/delta',
    params: { channelId: 'ch-1', seq, kind: 'text', index, text, entryId },
  };
}

function textEntry(id: string, text: string, seq: number, streaming = true): ChatEvent {
  return {
    kind: 'notification',
    method: 'claude/entry',
    params: { channelId: 'ch-1', seq, entry: { kind: 'text', id, text, ...(streaming ? { streaming } : {}) } },
  };
}

const turnEnded = (seq: number): ChatEvent => ({
  kind: 'notification',
  method: 'claude/turnEnded',
  params: {
    channelId: 'ch-1',
    seq,
    outcome: 'success',
    durationMs: 10,
    permissionWaitMs: 0,
    costUsd: 0.01,
    totalCostUsd: 0.01,
    usage: { inputTokens: 1, outputTokens: 1, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 },
  },
});

/** A turn's footer (its `turn` entry), which the daemon sends after claude/turnEnded. */
const footer = (seq: number): ChatEvent => ({
  kind: 'notification',
  method: 'claude/entry',
  params: {
    channelId: 'ch-1',
    seq,
    entry: { kind: 'turn', id: 'turn:u1', outcome: 'success', durationMs: 10, permissionWaitMs: 0, costUsd: 0 },
  },
});

/** The channel idle again: the last of a turn's end. */
const idle = (seq: number): ChatEvent => ({
  kind: 'notification',
  method: 'claude/status',
  params: { channelId: 'ch-1', seq, state: 'idle', sessionId: 's1' },
});

/** What the page does with the messages (src/webview/main.ts): each event at the host's rev. */
function pageState(messages: HostMessage[]): ChatState {
  let state = initialState();
  for (const m of messages) {
    if (m.type === 'reset') state = fromMessage(structuredClone(m.state));
    if (m.type !== 'events') continue;
    for (const sent of m.events) applyOnPage(state, sent);
  }
  return state;
}

describe("the host's feed of a chat page", () => {
  test("sends a frame's events as one message, in the order they came", () => {
    const f = feed();
    const events = [textEntry('t1', '', 1), delta('t1', 'Hel', 2), textEntry('t2', 'b', 3)];
    for (const e of events) f.apply(e);
    assert.equal(f.posted.length, 0, 'nothing goes before the frame is over');
    f.pass(0);
    assert.equal(f.posted.length, 1);
    assert.deepEqual(
      f.sent().map((e) => e.event),
      events,
    );
  });

  test('joins consecutive deltas of one block into one, with the text in order and the rev of the last', () => {
    const f = feed();
    f.apply(textEntry('t1', '', 1));
    f.apply(delta('t1', 'one ', 2));
    f.apply(delta('t1', 'two ', 3));
    f.apply(delta('t1', 'three', 4));
    f.pass(0);
    const [entry, joined] = f.sent() as [RevEvent, RevEvent];
    assert.equal(f.sent().length, 2);
    assert.equal(entry.rev, 1);
    assert.deepEqual(joined.event, delta('t1', 'one two three', 4));
    assert.equal(joined.rev, f.state.rev, "the page's copy takes the host's rev");
  });

  test('keeps deltas of other blocks, and those with another event between, apart', () => {
    const f = feed();
    const events = [
      textEntry('t1', '', 1),
      delta('t1', 'a', 2),
      delta('t1', 'b', 3, 1), // another block of the message
      textEntry('t2', '', 4),
      delta('t1', 'c', 5, 1), // the same block, but an entry came between
    ];
    for (const e of events) f.apply(e);
    f.pass(0);
    assert.deepEqual(
      f.sent().map((e) => e.event),
      events,
    );
  });

  test('gives the page the host state, whatever the frames, for every recorded stream', () => {
    for (const name of streamNames()) {
      const events = hostEvents(name as StreamName);
      // Frames of 1 to 7 events: every place a frame can end.
      for (let frame = 1; frame <= 7; frame++) {
        const f = feed();
        events.forEach((event, i) => {
          f.apply(event);
          if (i % frame === frame - 1) f.pass(FRAME_MS);
        });
        f.pass(FRAME_MS);
        assert.deepEqual(withPositions(pageState(f.posted)), withPositions(f.state), `${name}, frames of ${frame}`);
      }
    }
  });

  test("sends a turn's end, its footer and idle in one message, at once when idle comes", () => {
    const f = feed();
    f.apply(textEntry('t1', '', 1));
    f.apply(delta('t1', 'done', 2));
    f.apply(turnEnded(3));
    f.apply(footer(4));
    f.apply(idle(5));
    assert.equal(f.posted.length, 1, 'no timer had to run');
    assert.deepEqual(
      f.sent().map((e) => e.event),
      [textEntry('t1', '', 1), delta('t1', 'done', 2), turnEnded(3), footer(4), idle(5)],
    );
    assert.equal(f.armed().length, 0, 'nothing left waiting');
  });

  test("sends a turn's end that idle does not follow at the next turn of the event loop", () => {
    const f = feed();
    f.apply(delta('t1', 'done', 1));
    f.apply(turnEnded(2));
    f.apply(footer(3));
    assert.equal(f.posted.length, 0, 'the rest of the end may come in the same read');
    assert.deepEqual(
      f.armed().map((t) => t.ms),
      [END_WAIT_MS],
    );
    f.pass(END_WAIT_MS);
    assert.deepEqual(
      f.sent().map((e) => e.event),
      [delta('t1', 'done', 1), turnEnded(2), footer(3)],
    );
  });

  test('sends the events waiting before any other message', () => {
    const f = feed();
    f.apply(textEntry('t1', 'a', 1));
    f.feed.send({ type: 'focusPrompt' });
    assert.deepEqual(
      f.posted.map((m) => m.type),
      ['events', 'focusPrompt'],
    );
  });

  test('sends an answer that finished streaming without its text when the page has that text from its deltas', () => {
    const f = feed();
    f.apply(textEntry('t1', 'The ', 1));
    f.apply(delta('t1', 'whole ', 2));
    f.pass(FRAME_MS);
    f.apply(delta('t1', 'answer.', 3));
    f.apply(textEntry('t1', 'The whole answer.', 4, false));
    f.apply(turnEnded(5));
    f.pass(END_WAIT_MS);
    const finished = f.sent().at(-2)!;
    assert.equal(finished.textKept, true);
    assert.deepEqual(finished.event, textEntry('t1', '', 4, false), 'the text is not sent again');
    assert.deepEqual(
      withPositions(pageState(f.posted)),
      withPositions(f.state),
      "the page's copy has the whole answer",
    );
  });

  test('keeps an answer the page let go of while it streamed by id alone when it finishes with its text kept', () => {
    const f = feed();
    f.apply(textEntry('t1', 'The ', 1));
    f.apply(delta('t1', 'whole ', 2));
    f.pass(FRAME_MS);
    // The user scrolled far up meanwhile: the page keeps the streaming answer by id alone.
    const page = pageState(f.posted);
    release(page, ['t1']);
    const seen = f.posted.length;
    f.apply(delta('t1', 'answer.', 3));
    f.apply(textEntry('t1', 'The whole answer.', 4, false));
    f.apply(turnEnded(5));
    f.pass(END_WAIT_MS);
    for (const m of f.posted.slice(seen)) if (m.type === 'events') for (const sent of m.events) applyOnPage(page, sent);

    assert.equal(page.entries.find((e) => e.id === 't1')?.kind, 'far', 'not an answer with an empty text');
    fill(page, entriesOf(f.state, ['t1'])); // what the page asks the host for when it draws it
    assert.deepEqual(withPositions(page), withPositions(f.state));
  });

  test('sends a finished answer whole when its text is not the one its deltas made', () => {
    const f = feed();
    f.apply(textEntry('t1', '', 1));
    f.apply(delta('t1', 'The whole', 2));
    f.apply(textEntry('t1', 'The whole answer.', 3, false));
    f.pass(FRAME_MS);
    const finished = f.sent().at(-1)!;
    assert.equal(finished.textKept, undefined);
    assert.deepEqual(finished.event, textEntry('t1', 'The whole answer.', 3, false));
    assert.deepEqual(withPositions(pageState(f.posted)), withPositions(f.state));
  });

  test('sends a finished answer whole after the page got the whole state while it streamed', () => {
    const f = feed();
    f.apply(textEntry('t1', '', 1));
    f.apply(delta('t1', 'The whole ', 2));
    f.pass(FRAME_MS);
    f.feed.reset({
      type: 'reset',
      state: structuredClone(toMessage(f.state, Infinity)),
      info: null,
      workspaceFolders: [],
      allowBypassPermissions: false,
    });
    f.apply(delta('t1', 'answer.', 3));
    f.apply(textEntry('t1', 'The whole answer.', 4, false));
    f.pass(FRAME_MS);
    const finished = f.sent().at(-1)!;
    assert.equal(finished.textKept, undefined);
    assert.deepEqual(finished.event, textEntry('t1', 'The whole answer.', 4, false));
    assert.deepEqual(withPositions(pageState(f.posted)), withPositions(f.state));
  });

  test('drops the events waiting when the page gets the whole state (they are in it)', () => {
    const f = feed();
    f.apply(textEntry('t1', 'a', 1));
    f.apply(delta('t1', 'b', 2));
    f.feed.reset({
      type: 'reset',
      state: structuredClone(toMessage(f.state, Infinity)),
      info: null,
      workspaceFolders: [],
      allowBypassPermissions: false,
    });
    f.pass(FRAME_MS);
    assert.deepEqual(
      f.posted.map((m) => m.type),
      ['reset'],
    );
    assert.deepEqual(withPositions(pageState(f.posted)), withPositions(f.state));
  });

  test('sends at once after a quiet frame, then at most once a frame', () => {
    const f = feed();
    f.apply(textEntry('t1', '', 1));
    assert.deepEqual(
      f.armed().map((t) => t.ms),
      [0],
    );
    f.pass(4);
    f.apply(textEntry('t2', '', 2));
    assert.deepEqual(
      f.armed().map((t) => t.ms),
      [FRAME_MS],
      'the rest of the frame the last message began',
    );
    f.apply(textEntry('t3', '', 3));
    assert.equal(f.armed().length, 1, 'one timer per frame');
  });

  /** A feed that sent an answer's entry, then got the first little piece of its text. */
  function streamingSlowly() {
    const f = feed();
    f.apply(textEntry('t1', '', 1));
    f.pass(0);
    f.apply(delta('t1', 'a', 2));
    return f;
  }

  test("sends a slow stream's text alone at most every TEXT_FRAME_MS", () => {
    const f = streamingSlowly();
    assert.deepEqual(
      f.armed().map((t) => t.ms),
      [TEXT_FRAME_MS],
    );
    f.apply(delta('t1', 'b', 3));
    assert.equal(f.armed().length, 1, 'one timer for the text');
    f.pass(TEXT_FRAME_MS);
    assert.equal(f.posted.length, 2);
    assert.deepEqual(withPositions(pageState(f.posted)), withPositions(f.state));
  });

  test('sends streamed text at the frame once TEXT_BATCH_CHARS of it wait (a fast stream)', () => {
    const f = streamingSlowly();
    f.apply(delta('t1', 'b'.repeat(TEXT_BATCH_CHARS), 3));
    assert.deepEqual(
      f.armed().map((t) => t.ms),
      [FRAME_MS],
    );
  });

  test('sends slow text at the frame once another event waits with it', () => {
    const f = streamingSlowly();
    f.apply(textEntry('t2', '', 3));
    assert.deepEqual(
      f.armed().map((t) => t.ms),
      [FRAME_MS],
    );
  });

  test('holds the events while the page has not received IN_FLIGHT batches, then sends them as one', () => {
    const f = feed();
    f.apply(textEntry('t1', '', 1));
    for (let seq = 2; seq < 2 + IN_FLIGHT; seq++) {
      f.apply(delta('t1', String(seq), seq));
      f.pass(FRAME_MS);
    }
    assert.equal(f.posted.length, IN_FLIGHT, 'as many batches as may be on their way');
    f.apply(delta('t1', 'x', 10));
    f.apply(textEntry('t2', '', 11));
    f.apply(delta('t2', 'y', 12));
    assert.deepEqual(
      f.armed().map((t) => t.ms),
      [PATIENCE_MS],
      'the next batch waits for the page',
    );
    f.feed.received();
    assert.deepEqual(
      f.armed().map((t) => t.ms),
      [FRAME_MS],
      'the page got one: the events waiting go, a frame after the last batch',
    );
    f.pass(FRAME_MS);
    assert.equal(f.posted.length, IN_FLIGHT + 1, 'what came meanwhile went as one batch');
    assert.deepEqual(withPositions(pageState(f.posted)), withPositions(f.state));
  });

  test('sends the end of a turn without waiting for the page, even while it has not received the batches before it', () => {
    const f = feed();
    for (let seq = 1; seq <= IN_FLIGHT; seq++) {
      f.apply(delta('t1', String(seq), seq));
      f.pass(FRAME_MS);
    }
    f.apply(delta('t1', 'last', 10));
    f.apply(turnEnded(11));
    f.feed.received(); // the page got a batch meanwhile: the end does not wait PATIENCE_MS for more
    assert.deepEqual(
      f.armed().map((t) => t.ms),
      [END_WAIT_MS],
    );
    f.pass(END_WAIT_MS);
    assert.equal(f.posted.length, IN_FLIGHT + 1);
    assert.deepEqual(
      f
        .sent()
        .slice(-2)
        .map((e) => e.event),
      [delta('t1', 'last', 10), turnEnded(11)],
    );
    f.apply(idle(12));
    assert.equal(f.posted.length, IN_FLIGHT + 2, 'idle goes at once too');
  });

  test('sends anyway after PATIENCE_MS when the page says nothing (a page that is gone)', () => {
    const f = feed();
    for (let seq = 1; seq <= IN_FLIGHT; seq++) {
      f.apply(delta('t1', String(seq), seq));
      f.pass(FRAME_MS);
    }
    f.apply(delta('t1', 'more', 10));
    const [timer] = f.armed();
    assert.equal(timer?.ms, PATIENCE_MS);
    f.pass(PATIENCE_MS);
    assert.equal(f.posted.length, IN_FLIGHT + 1);
  });

  test('counts nothing on its way to a page that gets the whole state', () => {
    const f = feed();
    for (let seq = 1; seq <= IN_FLIGHT; seq++) {
      f.apply(delta('t1', String(seq), seq));
      f.pass(FRAME_MS);
    }
    f.feed.reset({
      type: 'reset',
      state: structuredClone(toMessage(f.state, Infinity)),
      info: null,
      workspaceFolders: [],
      allowBypassPermissions: false,
    });
    f.pass(TEXT_FRAME_MS); // the pace of slow text over too
    f.apply(delta('t1', 'after', 10));
    assert.deepEqual(
      f.armed().map((t) => t.ms),
      [0],
      'the next event goes at once, not held for the page',
    );
  });
});
