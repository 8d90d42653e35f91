// The chat's store of conversation entries (transcript.ts) and the chat state around it
// (chat-state.ts): the recorded real-CLI streams every client is tested with
// (tests/data/streams) must give their golden entries, and each rule is specified on its own.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PermissionRequestNotification } from '../../src/core/protocol.generated';
import { initialState, reduce, type ChatEvent, type ChatState } from '../../src/core/chat-state';
import {
  entriesOf,
  fill,
  isWaitingPrompt,
  listed,
  positionOf,
  reindexed,
  release,
  takeChanged,
  fromMessage,
  toMessage,
  type ConversationEntry,
  type SentTranscript,
} from '../../src/core/transcript';
import { goldenEntries, hostEvents, indexOf, notifications, streamNames, withPositions } from './fixtures';

function play(events: ChatEvent[], state: ChatState = initialState()): ChatState {
  for (const event of events) reduce(state, event);
  return state;
}

let seq = 0;

function entry(value: ConversationEntry): ChatEvent {
  return { kind: 'notification', method: 'claude/entry', params: { channelId: 'ch-1', seq: ++seq, entry: value } };
}

function delta(entryId: string | undefined, text: string, kind: 'text' | 'toolInput' = 'text'): ChatEvent {
  return {
    kind: 'notification',
    method: 'claude/delta',
    params: { channelId: 'ch-1', seq: ++seq, kind, index: 0, text, ...(entryId ? { entryId } : {}) },
  };
}

function status(state: 'idle' | 'running' | 'awaitingPermission' | 'exited', model?: string): ChatEvent {
  return {
    kind: 'notification',
    method: 'claude/status',
    params: { channelId: 'ch-1', seq: ++seq, state, sessionId: 's-1', ...(model ? { model } : {}) },
  };
}

function ask(over: Partial<PermissionRequestNotification> = {}): ChatEvent {
  return {
    kind: 'notification',
    method: 'claude/permissionRequest',
    params: {
      channelId: 'ch-1',
      seq: ++seq,
      requestId: 'r1',
      toolName: 'Read',
      toolUseId: 'toolu_1',
      input: { file_path: '/etc/hostname' },
      suggestions: [],
      ...over,
    },
  };
}

const ids = (state: ChatState) => listed(state).map((e) => e.id);
const prompt = (id: string, text: string, over: Partial<ConversationEntry> = {}): ConversationEntry =>
  ({ kind: 'prompt', id, text, ...over }) as ConversationEntry;
const text = (id: string, value: string, over: Partial<ConversationEntry> = {}): ConversationEntry =>
  ({ kind: 'text', id, text: value, ...over }) as ConversationEntry;

describe('the recorded streams', () => {
  for (const name of streamNames()) {
    it(`${name}: the store ends with the golden entries`, () => {
      const state = play(notifications(name));
      assert.deepEqual(listed(state), goldenEntries(name));
    });
  }
});

describe('claude/entry', () => {
  it('adds entries in the order first seen', () => {
    const state = play([entry(prompt('p1', 'hi')), entry(text('m1:0', 'hello'))]);
    assert.deepEqual(ids(state), ['p1', 'm1:0']);
  });

  it('replaces the entry with the same id in place', () => {
    const state = play([
      entry(text('m1:0', '', { streaming: true })),
      entry(text('m1:1', 'next')),
      entry(text('m1:0', 'done')),
    ]);
    assert.deepEqual(ids(state), ['m1:0', 'm1:1']);
    assert.deepEqual(state.entries[0], { kind: 'text', id: 'm1:0', text: 'done' });
  });

  it('lists a queued prompt after every other entry', () => {
    const state = play([
      entry(prompt('p1', 'one')),
      entry(prompt('p2', 'two', { queued: true })),
      entry(text('m:0', 'a')),
    ]);
    assert.deepEqual(ids(state), ['p1', 'm:0', 'p2']);
  });

  it('moves a queued prompt to the end when the CLI takes it up', () => {
    const state = play([
      entry(prompt('p1', 'one')),
      entry(prompt('p2', 'two', { queued: true })),
      entry(text('m:0', 'a')),
      entry(prompt('p2', 'two')),
      entry(text('m:1', 'b')),
    ]);
    assert.deepEqual(ids(state), ['p1', 'm:0', 'p2', 'm:1']);
    assert.deepEqual(state.queued, []);
  });
});

describe('claude/delta', () => {
  it("appends to its entry's text", () => {
    const state = play([entry(text('m:0', 'Hel', { streaming: true })), delta('m:0', 'lo')]);
    assert.equal((state.entries[0] as { text: string }).text, 'Hello');
  });

  it("appends a tool's input to its partialInput", () => {
    const state = play([
      entry({ kind: 'tool', id: 'toolu_1', name: 'Write', status: 'pending' }),
      delta('toolu_1', '{"file_', 'toolInput'),
      delta('toolu_1', 'path"', 'toolInput'),
    ]);
    assert.equal((state.entries[0] as { partialInput?: string }).partialInput, '{"file_path"');
  });

  it('changes nothing when it names no entry the store has', () => {
    const state = play([entry(text('m:0', 'a', { streaming: true })), delta(undefined, 'x'), delta('m:9', 'y')]);
    assert.deepEqual(listed(state), [{ kind: 'text', id: 'm:0', text: 'a', streaming: true }]);
  });

  it('marks only its own entry as changed', () => {
    const state = play([entry(text('m:0', 'a')), entry(text('m:1', 'b', { streaming: true }))]);
    const before = new Map(state.revs);
    reduce(state, delta('m:1', 'c'));
    assert.equal(state.revs.get('m:0'), before.get('m:0'));
    assert.notEqual(state.revs.get('m:1'), before.get('m:1'));
  });

  it('does not change the notification it came from (a second copy sees the same)', () => {
    const events = [entry(text('m:0', 'a', { streaming: true })), delta('m:0', 'b')];
    play(events);
    const again = play(events);
    assert.equal((again.entries[0] as { text: string }).text, 'ab');
  });
});

describe("a channel's transcript (after missed notifications)", () => {
  it('replaces what the chat has of each entry and adds the ones it missed', () => {
    const state = play([
      entry(prompt('p1', 'hi')),
      entry(text('m:0', 'Hel', { streaming: true })),
      { kind: 'transcript', entries: [prompt('p1', 'hi'), text('m:0', 'Hello'), text('m:1', 'more')] },
    ]);
    assert.deepEqual(listed(state), [prompt('p1', 'hi'), text('m:0', 'Hello'), text('m:1', 'more')]);
  });
});

describe('pages of a long chat', () => {
  const page = (entries: ConversationEntry[], hasOlder: boolean): ChatEvent => ({
    kind: 'transcript',
    entries,
    hasOlder,
  });

  it('a last page says whether older entries are left', () => {
    const state = play([page([prompt('p3', 'third'), text('m3:0', 'three')], true)]);
    assert.deepEqual(ids(state), ['p3', 'm3:0']);
    assert.deepEqual(state.older, { more: true, loading: false });
  });

  it('an older page goes above the entries read, and is no longer loading', () => {
    const state = play([
      page([prompt('p3', 'third'), text('m3:0', 'three')], true),
      { kind: 'olderLoading' },
      { kind: 'olderPage', entries: [prompt('p2', 'second'), text('m2:0', 'two')], beforeId: 'p3', hasOlder: false },
    ]);
    assert.deepEqual(ids(state), ['p2', 'm2:0', 'p3', 'm3:0']);
    assert.deepEqual(state.older, { more: false, loading: false });
    assert.equal(positionOf(state, 'p3'), 2);
  });

  it('an entry of an older page the chat has already moves to its place in the page, listed once', () => {
    const state = play([
      page([prompt('p3', 'third'), text('m3:0', 'three')], true),
      entry(text('m2:0', 'two, changed meanwhile')),
      {
        kind: 'olderPage',
        entries: [prompt('p2', 'second'), text('m2:0', 'two, as the page has it')],
        beforeId: 'p3',
        hasOlder: true,
      },
    ]);
    assert.deepEqual(ids(state), ['p2', 'm2:0', 'p3', 'm3:0']);
    assert.equal((state.entries[1] as { text: string }).text, 'two, as the page has it');
  });

  it('a last page read again keeps the pages read above it and the notices where they were', () => {
    const state = play([
      page([prompt('p3', 'third'), text('m3:0', 'three')], true),
      { kind: 'olderPage', entries: [prompt('p2', 'second'), text('m2:0', 'two')], beforeId: 'p3', hasOlder: true },
      { kind: 'notice', level: 'info', text: 'Resumed the conversation.' },
      { kind: 'transcript', entries: [text('m3:0', 'three'), prompt('p4', 'fourth')] },
    ]);
    const notice = state.entries.find((e) => e.kind === 'notice')!.id;
    assert.deepEqual(ids(state), ['p2', 'm2:0', 'p3', 'm3:0', notice, 'p4']);
    assert.deepEqual(state.older, { more: true, loading: false }, 'a page read again says nothing of older ones');
  });

  /** Exchanges `from` to `to` (both included) of a long chat, oldest first. */
  const exchanges = (from: number, to: number): ConversationEntry[] =>
    Array.from({ length: to - from + 1 }, (_, k) => [
      prompt(`p${from + k}`, `question ${from + k}`),
      text(`m${from + k}:0`, `answer ${from + k}`),
    ]).flat();
  const older = (from: number, to: number, hasOlder = true): ChatEvent => ({
    kind: 'olderPage',
    entries: exchanges(from, to),
    beforeId: `p${to + 1}`,
    hasOlder,
  });

  it('a page placed above writes the positions of its own entries, not of the entries read before', () => {
    const state = play([page(exchanges(4001, 5000), true), older(3001, 4000)]);
    const written = reindexed.count;
    play([older(2951, 3000)], state);
    assert.equal(reindexed.count - written, 100, 'the page of 100 entries, whatever the chat holds');
    assert.equal(positionOf(state, 'p4001'), 2100);
  });

  it('pages placed above keep every entry once, in order, each at its position', () => {
    const state = play([
      page(exchanges(7, 9), true),
      { kind: 'notice', level: 'info', text: 'Resumed the conversation.' },
      older(4, 6),
      older(1, 3, false),
      entry(prompt('p10', 'question 10')),
      entry(text('m10:0', 'answ', { streaming: true })),
      { kind: 'notice', level: 'info', text: 'Attached.', beforeTurn: true },
      delta('m10:0', 'er 10'),
    ]);
    const [resumed, attached] = state.entries.filter((e) => e.kind === 'notice').map((e) => e.id);
    const expected = [...exchanges(1, 9).map((e) => e.id), resumed!, attached!, 'p10', 'm10:0'];
    assert.deepEqual(ids(state), expected);
    assert.deepEqual(
      expected.map((id) => positionOf(state, id)),
      expected.map((_, i) => i),
    );
    assert.equal((state.entries.at(-1) as { text: string }).text, 'answer 10');
  });

  it('a page placed above is all a view has to redraw, however many entries it drew before', () => {
    const state: ChatState = { ...play([page(exchanges(4001, 5000), true), older(3001, 4000)]), changed: [] };
    play([{ kind: 'olderLoading' }, older(2951, 3000), delta('m5000:0', ', more')], state);
    assert.deepEqual(
      takeChanged(state).map((e) => e.id),
      [...exchanges(2951, 3000).map((e) => e.id), 'm5000:0'],
    );
    assert.deepEqual(takeChanged(state), [], 'what was taken is not listed again');
  });
});

describe("the client's notices", () => {
  const attached: ChatEvent = { kind: 'notice', level: 'info', text: 'Attached.', beforeTurn: true };

  it('about the running turn go before its prompt, and what streams next stays after them', () => {
    const state = play([
      entry(prompt('p1', 'first')),
      entry(text('m:0', 'done')),
      entry({ kind: 'turn', id: 'turn:1', outcome: 'success', costUsd: 0.01, durationMs: 1200, permissionWaitMs: 0 }),
      entry(prompt('p2', 'second')),
      entry(text('m:1', 'stre', { streaming: true })),
      attached,
      delta('m:1', 'aming'),
      entry(text('m:2', 'more')),
    ]);
    assert.deepEqual(
      listed(state).map((e) => e.id),
      ['p1', 'm:0', 'turn:1', state.entries[3]!.id, 'p2', 'm:1', 'm:2'],
    );
    assert.equal(state.entries[3]!.kind, 'notice');
    assert.equal((state.entries[5] as { text: string }).text, 'streaming');
    assert.deepEqual(
      state.entries.map((e, i) => positionOf(state, e.id) === i),
      state.entries.map(() => true),
    );
  });

  it('about the running turn go at the end when no turn runs', () => {
    const state = play([
      entry(prompt('p1', 'first')),
      entry(text('m:0', 'done')),
      entry({ kind: 'turn', id: 'turn:1', outcome: 'success', costUsd: 0.01, durationMs: 1200, permissionWaitMs: 0 }),
      attached,
    ]);
    assert.equal(listed(state).at(-1)!.kind, 'notice');
  });

  it("about the running turn skip a sub-agent's prompt", () => {
    const state = play([
      entry(prompt('p1', 'delegate')),
      entry({ ...prompt('p-sub', 'sub-task'), parentId: 'toolu_1' }),
      attached,
    ]);
    assert.deepEqual(
      listed(state).map((e) => e.kind),
      ['notice', 'prompt', 'prompt'],
    );
  });
});

describe('a prompt sent while the channel opens', () => {
  const waiting: ChatEvent = { kind: 'waiting', id: 'p1', text: 'first' };

  it("is listed at once, waiting, and the daemon's entry for it (the same id) takes its place", () => {
    const state = play([entry(text('m:0', 'stored')), waiting]);
    assert.deepEqual(
      listed(state).map((e) => [e.id, isWaitingPrompt(e)]),
      [
        ['m:0', false],
        ['p1', true],
      ],
    );
    play([entry(prompt('p1', 'first', { queued: true })), entry(prompt('p1', 'first'))], state);
    assert.deepEqual(
      listed(state).map((e) => [e.id, isWaitingPrompt(e)]),
      [
        ['m:0', false],
        ['p1', false],
      ],
    );
  });

  it('stays when the chat is shown afresh before it is sent', () => {
    const state = play([
      waiting,
      { kind: 'snapshot', channelId: 'ch-1', seq: 3, entries: [text('m:1', 'the channel page')], pending: [] },
    ]);
    assert.deepEqual(
      listed(state).map((e) => [e.id, isWaitingPrompt(e)]),
      [
        ['m:1', false],
        ['p1', true],
      ],
    );
  });

  it('not sent, is a notice saying so', () => {
    const state = play([entry(text('m:0', 'stored')), waiting, { kind: 'notSent', id: 'p1' }]);
    assert.deepEqual(state.queued, []);
    assert.deepEqual(
      listed(state).map((e) => (e.kind === 'notice' ? e.text : e.id)),
      ['m:0', 'Not sent: first'],
    );
  });
});

describe('the host and the page', () => {
  it('give the same state from a copy cloned midway and fed the rest', () => {
    const events = hostEvents('write-allowed');
    const middle = Math.floor(events.length / 2);
    const host = play(events.slice(0, middle));
    // As the host sends it: through JSON (VS Code's webview messaging), its index made anew.
    const page = fromMessage(JSON.parse(JSON.stringify(toMessage(host, Infinity))) as SentTranscript<ChatState>);
    assert.deepEqual(withPositions(page), withPositions(host), 'the same state once it went through JSON');
    play(events.slice(middle), host);
    play(events.slice(middle), page);
    assert.deepEqual(withPositions(page), withPositions(host));
  });
});

describe('a page that keeps entries by id alone (far from its view)', () => {
  const chat = (): ChatState =>
    play([
      entry(prompt('p1', 'first')),
      entry(text('m1', 'answer one')),
      entry({ kind: 'tool', id: 't1', name: 'Agent', status: 'done', input: {} }),
      entry(text('s1', 'a sub-agent says', { parentId: 't1' })),
      entry({ kind: 'turn', id: 'turn:p1', outcome: 'success', durationMs: 1, costUsd: 0, permissionWaitMs: 0 }),
      entry(prompt('p2', 'second')),
      entry(text('m2', 'answer two')),
    ]);

  it('keeps the ids, kinds and Agent calls of the entries it lets go, in their places', () => {
    const state = chat();
    assert.equal(release(state, ['m1', 's1', 'nope']), 2);
    assert.deepEqual(state.entries[1], { kind: 'far', id: 'm1', of: 'text' });
    assert.deepEqual(state.entries[3], { kind: 'far', id: 's1', of: 'text', parentId: 't1' });
    assert.deepEqual(ids(state), ['p1', 'm1', 't1', 's1', 'turn:p1', 'p2', 'm2']);
  });

  it('gets back from the host the entries it let go, as the host has them now', () => {
    const host = chat();
    const page = fromMessage(structuredClone(toMessage(host, Infinity)));
    release(page, ['m1', 'm2']);
    assert.deepEqual(entriesOf(page, ['m1', 'p2']), [prompt('p2', 'second')], 'none of those it let go');
    assert.deepEqual(fill(page, entriesOf(host, ['m1', 'm2', 'gone'])), ['m1', 'm2']);
    assert.deepEqual(page, host);
  });

  it('is sent by the host with its last entries whole and the rest by id alone', () => {
    const host = chat();
    const sent = toMessage(host, 2);
    assert.deepEqual(
      sent.entries.map((e) => e.kind),
      ['far', 'far', 'far', 'far', 'far', 'prompt', 'text'],
    );
    assert.equal(host.entries[0]!.kind, 'prompt', "the host's own state keeps them whole");
    assert.equal(toMessage(host, 100).entries, host.entries, 'a chat shorter than that goes as it is');
  });

  it('gives the state of the host once it got back the entries it let go, whatever events came meanwhile', () => {
    const host = play([status('running')], chat());
    const page = fromMessage(structuredClone(toMessage(host, 0)));
    const events: ChatEvent[] = [
      delta('m2', ' and more'),
      entry(text('m1', 'answer one, edited')),
      { kind: 'notice', level: 'warn', text: 'about the running turn', beforeTurn: true },
      { kind: 'olderPage', entries: [prompt('p0', 'zeroth')], beforeId: 'p1', hasOlder: false },
      entry(text('m3', 'new')),
    ];
    play(events, host);
    play(events, page);
    assert.deepEqual(ids(page), ids(host), 'every entry in the same place (the notice before the prompt let go)');
    fill(
      page,
      entriesOf(
        host,
        page.entries.filter((e) => e.kind === 'far').map((e) => e.id),
      ),
    );
    assert.deepEqual(withPositions(page), withPositions(host));
  });
});

describe('permission requests', () => {
  it('are pending from the request on', () => {
    const state = play([ask()]);
    assert.deepEqual(Object.keys(state.pending), ['r1']);
  });

  it('are not pending when a client rule allowed them', () => {
    assert.deepEqual(play([ask({ autoDecision: 'allow' })]).pending, {});
  });

  it('are no longer pending once their tool entry says they were decided', () => {
    const state = play([
      ask(),
      entry({
        kind: 'tool',
        id: 'toolu_1',
        name: 'Read',
        status: 'running',
        permission: { requestId: 'r1', decision: 'answered' },
      }),
    ]);
    assert.deepEqual(state.pending, {});
  });

  it('are no longer pending when withdrawn', () => {
    const state = play([
      ask(),
      {
        kind: 'notification',
        method: 'claude/permissionCancelled',
        params: { channelId: 'ch-1', seq: ++seq, requestId: 'r1', reason: 'interrupted' },
      },
    ]);
    assert.deepEqual(state.pending, {});
  });

  it('are no longer pending when the channel goes idle', () => {
    assert.deepEqual(play([ask(), status('idle')]).pending, {});
  });

  it('of an old channel are dropped when the chat moves to a new one (daemon restart)', () => {
    const state = play([
      { kind: 'bound', channelId: 'ch-1', sessionId: 's', cwd: '/p' },
      ask(),
      { kind: 'bound', channelId: 'ch-2', sessionId: 's', cwd: '/p' },
    ]);
    assert.deepEqual(state.pending, {});
    assert.equal(state.channelId, 'ch-2');
  });

  it('show the recorded Write as pending, then answered, then allowed', () => {
    const events = hostEvents('write-allowed');
    const asked = indexOf(events, (e) => e.kind === 'notification' && e.method === 'claude/permissionRequest');
    const waiting = play(events.slice(0, asked + 1));
    assert.equal(Object.values(waiting.pending)[0]?.toolName, 'Write');
    const done = play(events.slice(asked + 1), waiting);
    assert.deepEqual(done.pending, {});
  });
});

describe('status, cost and files', () => {
  it('keeps the model when a status does not name it', () => {
    const state = play([status('running', 'claude-opus-5-5'), status('idle')]);
    assert.equal(state.status.model, 'claude-opus-5-5');
    assert.equal(state.status.state, 'idle');
  });

  it("counts the channel's cost from claude/turnEnded", () => {
    const state = play(hostEvents('streamed-thinking'));
    assert.ok(state.totals.costUsd > 0);
    assert.ok((state.totals.lastTurnUsage?.outputTokens ?? 0) > 0);
  });

  it('keeps file updates without their contents (those stay in the host)', () => {
    const state = play(hostEvents('write-allowed'));
    const [file, ...more] = state.files;
    assert.ok(file && more.length === 0);
    assert.equal(file.toolUseId, 'toolu_scripted_1');
    assert.match(file.diff ?? '', /^-A web shop\.$/m);
    assert.ok(!('oldContent' in file) && !('newContent' in file));
  });

  it("lists a rewind's restored file as an entry of its own", () => {
    const state = play([
      {
        kind: 'notification',
        method: 'claude/fileUpdated',
        params: {
          channelId: 'ch-1',
          seq: 7,
          path: '/p/a.txt',
          toolName: 'rewindFiles',
          toolUseId: null,
          messageId: 'p1',
          parentToolUseId: null,
          oldContent: 'b',
          newContent: 'a',
          diff: '-b\n+a\n',
          notice: null,
        },
      },
    ]);
    assert.deepEqual(listed(state), [{ kind: 'restoredFile', id: 'file:7', seq: 7 }]);
  });
});

describe('performance', () => {
  it('appends a delta to its entry without reading the other entries', () => {
    // A delta costs O(delta): found by id (`at`), not by scanning the conversation. The
    // entries are counted as they are read, so a scan shows whatever the machine's speed.
    const earlier = Array.from({ length: 5_000 }, (_, i) => entry(text(`m:${i}`, 'done')));
    const state = play([...earlier, entry(text('m:live', '', { streaming: true }))]);
    let reads = 0;
    state.entries = new Proxy(state.entries, {
      get(target, key, receiver) {
        reads++;
        return Reflect.get(target, key, receiver) as unknown;
      },
    });
    for (let i = 0; i < 1_000; i++) reduce(state, delta('m:live', 'word '));
    assert.equal((state.entries[5_000] as { text: string }).text, 'word '.repeat(1_000));
    assert.ok(reads <= 1_000 * 2 + 1, `${reads} reads of the entries for 1,000 deltas`);
  });
});
