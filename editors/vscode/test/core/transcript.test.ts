// The transcript reducer over notification sequences recorded from the real daemon, the
// real CLI and the stand-in model (tests/data/streams, tests/conversation/record_streams.py).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { History, PermissionRequestNotification } from '../../src/core/protocol.generated';
import {
  initialState,
  reduce,
  type ChatEvent,
  type ChatState,
  type Entry,
  type TextEntry,
  type ThinkingEntry,
  type ToolEntry,
  type TurnEntry,
} from '../../src/core/transcript';
import { hostEvents, messagesOf, type FixtureName } from './fixtures';

function play(events: ChatEvent[], state: ChatState = initialState()): ChatState {
  for (const event of events) reduce(state, event);
  return state;
}

function chat(name: FixtureName): ChatState {
  return play(hostEvents(name));
}

function kinds(state: ChatState): string[] {
  return state.entries.map((e) => (e.kind === 'tool' ? `tool:${e.name}` : e.kind));
}

function only<K extends Entry['kind']>(state: ChatState, kind: K): Extract<Entry, { kind: K }> {
  const found = state.entries.filter((e): e is Extract<Entry, { kind: K }> => e.kind === kind);
  assert.equal(found.length, 1, `one ${kind} entry expected, got ${kinds(state).join(', ')}`);
  return found[0]!;
}

function toolNamed(state: ChatState, name: string): ToolEntry {
  const found = state.entries.find((e): e is ToolEntry => e.kind === 'tool' && e.name === name);
  assert.ok(found, `no ${name} tool in ${kinds(state).join(', ')}`);
  return found;
}

/** The final text of the `assistant` messages' blocks of one type, in order. */
function finalTexts(name: FixtureName, type: 'text' | 'thinking'): string[] {
  return messagesOf(name, 'assistant').flatMap((m) =>
    (m.message as { content: Record<string, string>[] }).content
      .filter((b) => b.type === type)
      .map((b) => b[type] ?? ''),
  );
}

describe('a streamed answer with thinking', () => {
  it('shows the prompt once, the thinking, the answer and the turn footer', () => {
    const state = chat('streamed-thinking');
    assert.deepEqual(kinds(state), ['user', 'thinking', 'text', 'turn']);
    assert.equal(only(state, 'user').text, 'write a palindrome check');
    assert.equal(only(state, 'thinking').text, finalTexts('streamed-thinking', 'thinking')[0]);
    assert.equal(only(state, 'text').text, finalTexts('streamed-thinking', 'text')[0]);
    assert.equal(only(state, 'text').streaming, false);
    assert.equal(only(state, 'thinking').streaming, false);
    const turn = only(state, 'turn');
    assert.equal(turn.outcome, 'success');
    assert.ok(turn.costUsd > 0 && turn.durationMs > 0);
    assert.equal(state.status.state, 'idle');
    assert.equal(state.totals.costUsd, turn.costUsd);
    assert.ok(state.totals.lastTurnUsage && state.totals.lastTurnUsage.outputTokens > 0);
  });

  it('streams the deltas into the open block, then takes the final text, which is the same', () => {
    const events = hostEvents('streamed-thinking');
    const state = initialState();
    let sawStreamingText = '';
    let sawStreamingThinking = false;
    for (const event of events) {
      reduce(state, event);
      const text = state.entries.find((e): e is TextEntry => e.kind === 'text');
      const thinking = state.entries.find((e): e is ThinkingEntry => e.kind === 'thinking');
      if (text?.streaming) sawStreamingText = text.text;
      if (thinking?.streaming && thinking.text.length > 0) sawStreamingThinking = true;
    }
    const final = finalTexts('streamed-thinking', 'text')[0]!;
    assert.ok(sawStreamingThinking, 'the thinking never streamed');
    assert.ok(sawStreamingText.length > 0 && final.startsWith(sawStreamingText), 'the text never streamed');
    const deltas = events
      .filter((e) => e.kind === 'notification' && e.method === 'claude/delta' && e.params.kind === 'text')
      .map((e) => (e.kind === 'notification' && e.method === 'claude/delta' ? e.params.text : ''))
      .join('');
    assert.equal(deltas, final);
  });

  it('gives the same state in a copy that is cloned midway and fed the rest (host and webview)', () => {
    const events = hostEvents('streamed-thinking');
    const middle = Math.floor(events.length / 2);
    const host = play(events.slice(0, middle));
    const webview = structuredClone(host);
    assert.deepEqual(JSON.parse(JSON.stringify(host)), host, 'the state is plain JSON');
    play(events.slice(middle), host);
    play(events.slice(middle), webview);
    assert.deepEqual(webview, host);
  });

  it('bumps the rev of the entry a delta changes, not of the others', () => {
    const events = hostEvents('streamed-thinking');
    const isDelta = (e: ChatEvent) => e.kind === 'notification' && e.method === 'claude/delta';
    const lastDelta = events.length - 1 - [...events].reverse().findIndex(isDelta);
    const state = play(events.slice(0, lastDelta));
    const before = state.entries.map((e) => e.rev);
    reduce(state, events[lastDelta]!);
    const changed = state.entries.filter((e, i) => e.rev !== before[i]).map((e) => e.kind);
    assert.deepEqual(changed, ['text']);
  });
});

describe('a Write allowed', () => {
  it('is pending with its preview, then answered, then allowed with the file update', () => {
    const events = hostEvents('write-allowed');
    const state = initialState();
    const seen: string[] = [];
    for (const event of events) {
      reduce(state, event);
      const write = state.entries.find((e): e is ToolEntry => e.kind === 'tool');
      const mark = `${write?.status}/${write?.permission?.state ?? '-'}/${Object.keys(state.pending).length}`;
      if (write && seen.at(-1) !== mark) seen.push(mark);
    }
    assert.deepEqual(seen, ['pending/-/0', 'running/-/0', 'pending/pending/1', 'running/answered/0', 'done/allowed/0']);
    const write = toolNamed(state, 'Write');
    assert.equal(write.input?.file_path, '/home/dev/project/README.md');
    assert.equal(write.partialInput, '');
    assert.match(write.permission?.preview ?? '', /^\+A tiny web shop\.$/m);
    assert.match(write.result?.text ?? '', /updated successfully/);
    assert.equal(write.fileUpdates.length, 1);
    const file = state.files[0]!;
    assert.equal(file.seq, write.fileUpdates[0]);
    assert.equal(file.toolUseId, write.toolUseId);
    assert.match(file.diff ?? '', /^-A web shop\.$/m);
    assert.ok(!('oldContent' in file) && !('newContent' in file), 'file contents stay in the host');
    assert.ok(!JSON.stringify(write.result?.details).includes('originalFile'));
    assert.deepEqual(kinds(state), ['user', 'text', 'tool:Write', 'text', 'turn']);
  });

  it('keeps the partial input while it streams', () => {
    const events = hostEvents('write-allowed');
    const firstInput = events.findIndex(
      (e) => e.kind === 'notification' && e.method === 'claude/delta' && e.params.kind === 'toolInput',
    );
    const state = play(events.slice(0, firstInput + 3));
    const write = toolNamed(state, 'Write');
    assert.equal(write.input, null);
    assert.ok(write.partialInput.startsWith('{"file_path":"/home/dev/proj'));
  });
});

describe('an Edit denied with a reason', () => {
  it('is denied with the reason as its result and keeps the proposed diff', () => {
    const state = chat('edit-denied');
    const edit = toolNamed(state, 'Edit');
    assert.equal(edit.status, 'denied');
    assert.equal(edit.permission?.state, 'denied');
    assert.equal(edit.result?.text, 'Keep the greeting short.');
    assert.match(edit.permission.preview ?? '', /^\+print\('hello, world'\)$/m);
    assert.deepEqual(state.files, []);
    assert.deepEqual(state.pending, {});
    assert.deepEqual(kinds(state), ['user', 'tool:Edit', 'text', 'turn']);
  });
});

describe('an interrupted stream', () => {
  it('keeps what was streamed, marked aborted, and ends with an interrupted footer', () => {
    const state = chat('interrupted');
    assert.deepEqual(kinds(state), ['user', 'text', 'turn']);
    const text = only(state, 'text');
    assert.equal(text.aborted, true);
    assert.equal(text.streaming, false);
    assert.equal(text.text, finalTexts('interrupted', 'text')[0]);
    assert.equal((state.entries.at(-1) as TurnEntry).outcome, 'interrupted');
    assert.equal((state.entries.at(-1) as TurnEntry).error, null);
  });
});

describe('an AskUserQuestion', () => {
  it('is pending with its questions, then done with the answers', () => {
    const events = hostEvents('ask-question');
    const asked = events.findIndex((e) => e.kind === 'notification' && e.method === 'claude/permissionRequest');
    const waiting = play(events.slice(0, asked + 2));
    const [request] = Object.values(waiting.pending);
    assert.equal(request?.requiresUserInteraction, true);
    assert.equal((request.input.questions as unknown[]).length, 2);
    assert.equal(waiting.status.state, 'awaitingPermission');

    const state = play(events.slice(asked + 2), waiting);
    const ask = toolNamed(state, 'AskUserQuestion');
    assert.equal(ask.status, 'done');
    assert.equal(ask.permission?.state, 'allowed');
    assert.deepEqual((ask.result?.details as { answers: unknown }).answers, {
      'Which colour should the button be?': 'Blue',
      'Which states need styles?': 'hover, focus',
    });
  });
});

describe('a Bash tool', () => {
  it('shows its output', () => {
    const state = chat('bash-output');
    const bash = toolNamed(state, 'Bash');
    assert.equal(bash.status, 'done');
    assert.equal(bash.input?.command, 'seq 1 12');
    assert.equal(bash.result?.text, Array.from({ length: 12 }, (_, i) => String(i + 1)).join('\n'));
    assert.equal(bash.permission, null);
  });
});

describe('an API error', () => {
  it('ends the turn in error with the message, and shows no answer', () => {
    const state = chat('api-error');
    assert.deepEqual(kinds(state), ['user', 'turn']);
    const turn = only(state, 'turn');
    assert.equal(turn.outcome, 'error');
    assert.match(turn.error ?? '', /API Error: 500 scripted failure/);
  });
});

describe('a plan approved', () => {
  it('carries the plan in the pending request and switches the mode', () => {
    const events = hostEvents('plan-approved');
    const asked = events.findIndex((e) => e.kind === 'notification' && e.method === 'claude/permissionRequest');
    const waiting = play(events.slice(0, asked + 1));
    const [request] = Object.values(waiting.pending);
    assert.equal(request?.toolName, 'ExitPlanMode');
    assert.match(String(request.input.plan), /^# Greeting plan/);
    assert.equal(toolNamed(waiting, 'ExitPlanMode').input?.plan, request.input.plan);

    const state = play(events.slice(asked + 1), waiting);
    assert.equal(state.status.permissionMode, 'acceptEdits');
    assert.equal(toolNamed(state, 'ExitPlanMode').status, 'done');
    assert.equal(toolNamed(state, 'Write').fileUpdates.length, 1);
  });
});

describe('a sub-agent', () => {
  it('nests its tool calls under the Agent call', () => {
    const state = chat('sub-agent');
    const agent = toolNamed(state, 'Agent');
    const bash = toolNamed(state, 'Bash');
    assert.equal(agent.parentToolUseId, null);
    assert.equal(bash.parentToolUseId, agent.toolUseId);
    assert.equal(bash.result?.text, 'hi');
    assert.equal(agent.status, 'done');
    assert.equal(
      state.entries.filter((e) => e.kind === 'user').length,
      1,
      "the sub-agent's prompt is not a user message",
    );
  });
});

describe('prompts', () => {
  it('queues a prompt sent while a turn runs until the CLI takes it up', () => {
    const events = hostEvents('streamed-thinking');
    const firstDelta = events.findIndex((e) => e.kind === 'notification' && e.method === 'claude/delta');
    const state = play(events.slice(0, firstDelta));
    reduce(state, { kind: 'userMessage', messageId: 'second', text: 'and another', images: 0 });
    assert.equal(state.queued.length, 1);
    assert.ok(!state.entries.some((e) => e.kind === 'user' && e.messageId === 'second'));
    play(events.slice(firstDelta), state);
    // This CLI never echoed it: idle places it anyway, after the answer it waited for.
    assert.deepEqual(state.queued, []);
    assert.deepEqual(kinds(state), ['user', 'thinking', 'text', 'turn', 'user']);
  });

  it('shows a prompt of another client once, from its replay', () => {
    const events = hostEvents('bash-output').filter((e) => e.kind !== 'userMessage');
    const state = play(events);
    assert.equal(only(state, 'user').text, 'count to twelve');
  });
});

describe('permission requests', () => {
  const request = (over: Partial<PermissionRequestNotification>): ChatEvent => ({
    kind: 'notification',
    method: 'claude/permissionRequest',
    params: {
      channelId: 'ch-1',
      seq: 1,
      requestId: 'r1',
      toolName: 'Read',
      toolUseId: 'toolu_1',
      input: { file_path: '/etc/hostname' },
      suggestions: [],
      ...over,
    },
  });

  it('an auto-allowed request is not pending', () => {
    const state = play([request({ autoDecision: 'allow' })]);
    assert.deepEqual(state.pending, {});
    assert.equal(toolNamed(state, 'Read').permission?.state, 'allowed');
  });

  it('a cancelled request is no longer pending', () => {
    const state = play([
      request({}),
      {
        kind: 'notification',
        method: 'claude/permissionCancelled',
        params: { channelId: 'ch-1', seq: 2, requestId: 'r1', reason: 'interrupted' },
      },
    ]);
    assert.deepEqual(state.pending, {});
    assert.equal(toolNamed(state, 'Read').permission?.state, 'cancelled');
  });

  it('a new channel (daemon restart) drops the requests of the old one', () => {
    const state = play([
      { kind: 'bound', channelId: 'ch-1', sessionId: 's', cwd: '/p' },
      request({}),
      { kind: 'bound', channelId: 'ch-2', sessionId: 's', cwd: '/p' },
    ]);
    assert.deepEqual(state.pending, {});
    assert.equal(state.channelId, 'ch-2');
  });
});

describe('history', () => {
  const history: History = {
    sessionId: 'e3394f75-9800-4f43-9027-7493ab933496',
    warnings: [],
    messages: [
      { kind: 'userPrompt', uuid: 'u1', text: 'write a readme please' },
      { kind: 'thinking', uuid: 'a1', text: 'A short README will do.' },
      {
        kind: 'toolUse',
        uuid: 'a2',
        toolName: 'Write',
        toolUseId: 'toolu_h1',
        input: { file_path: '/p/README.md', content: '# Shop\n' },
      },
      { kind: 'toolResult', uuid: 'r1', toolUseId: 'toolu_h1', text: 'File created', permission: 'allowed' },
      { kind: 'toolUse', uuid: 'a3', toolName: 'Edit', toolUseId: 'toolu_h2', input: {} },
      { kind: 'toolResult', uuid: 'r2', toolUseId: 'toolu_h2', text: 'No.', isError: true, permission: 'denied' },
      { kind: 'assistantText', uuid: 'a4', text: 'README.md is written.' },
      { kind: 'system', uuid: 's1', subtype: 'compactBoundary', text: 'Conversation compacted' },
    ],
  };

  it('comes first, with its prompts usable for fork and rewind, and tool outcomes', () => {
    const state = play([{ kind: 'history', history }, ...hostEvents('bash-output')]);
    assert.deepEqual(kinds(state).slice(0, 7), [
      'user',
      'thinking',
      'tool:Write',
      'tool:Edit',
      'text',
      'notice',
      'user',
    ]);
    assert.equal((state.entries[0] as { messageId: string }).messageId, 'u1');
    assert.equal(toolNamed(state, 'Write').permission?.state, 'allowed');
    assert.equal(toolNamed(state, 'Edit').status, 'denied');
    assert.equal(toolNamed(state, 'Bash').status, 'done', 'live tool results still find their call');
  });
});

describe('performance', () => {
  it('appends a long stream in time proportional to the deltas', () => {
    const state = play(hostEvents('interrupted').slice(0, 12));
    const delta: ChatEvent = {
      kind: 'notification',
      method: 'claude/delta',
      params: { channelId: 'ch-4', seq: 0, kind: 'text', index: 0, text: 'word ' },
    };
    const started = performance.now();
    for (let i = 0; i < 200_000; i++) reduce(state, delta);
    const elapsed = performance.now() - started;
    assert.ok(only(state, 'text').text.length >= 1_000_000);
    assert.ok(elapsed < 1500, `200k deltas took ${elapsed.toFixed(0)} ms`);
  });
});
