// The protocol client core against the real daemon, the real Claude Code CLI and the
// stand-in model: each test one behaviour, in its own HOME and workspace.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import type { ChatEvent } from '../../src/core/chat-state';
import type { SidecarClient } from '../../src/core/client';
import { daemonLineLevel } from '../../src/core/connection';
import { SidecarError } from '../../src/core/errors';
import { listed } from '../../src/core/transcript';
import {
  assertAllGone,
  client,
  Recorder,
  removeSandbox,
  sandbox,
  startModel,
  type Model,
  type Sandbox,
} from './harness';
import { GREETING, SCENARIO } from './scenario';

/** The notice a chat shows once a new daemon has taken it over. */
const resumedNotice = (e: ChatEvent) => e.kind === 'notice' && /Resumed/.test(e.text);

let model: Model;
let box: Sandbox;
let sidecar: SidecarClient;
let pids: number[];

before(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-model-'));
  model = await startModel(SCENARIO, dir);
});
after(async () => model.stop());

beforeEach(() => {
  box = sandbox(model);
  fs.writeFileSync(path.join(box.workspace, 'hello.py'), "print('hello')\n");
  sidecar = client(box);
  pids = [];
  sidecar.onChatOpened((chat) =>
    chat.onEvent((e) => {
      if (e.kind === 'bound' && chat.pid) pids.push(chat.pid);
    }),
  );
  sidecar.onDaemonState(async (s) => {
    if (s === 'running') pids.push((await sidecar.daemon()).pid!);
  });
});

afterEach(async () => {
  await sidecar.dispose();
  await assertAllGone(pids);
  removeSandbox(box);
});

async function open() {
  const chat = await sidecar.openChat({ cwd: box.workspace });
  return { chat, rec: new Recorder(chat) };
}

describe('the protocol client core', () => {
  test('an answer streams as deltas, then arrives whole', async () => {
    const { rec } = await open();
    const ended = await rec.turn('hello there');
    assert.equal(ended.outcome, 'success');
    const text = rec
      .notifications()
      .flatMap((n) => (n.method === 'claude/delta' && n.params.kind === 'text' ? [n.params.text] : []));
    assert.ok(text.length > 1, `expected several text deltas, got ${text.length}`);
    assert.equal(text.join(''), GREETING);
    const thinking = rec.notifications().some((n) => n.method === 'claude/delta' && n.params.kind === 'thinking');
    assert.ok(thinking, 'the thinking streamed too');
  });

  test('an image goes to the model with the text of the message', async () => {
    const { chat, rec } = await open();
    // A 1x1 transparent PNG.
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
    const since = rec.mark();
    const messageId = await chat.send('hello, what is in this picture?', [
      { type: 'image', mediaType: 'image/png', data: png },
    ]);
    const ended = await rec.next('claude/turnEnded', (p) => (p.messageIds ?? []).includes(messageId), { since });
    assert.equal(ended.outcome, 'success');
    // What the CLI stored is what it took up.
    const daemon = await sidecar.daemon();
    const history = await daemon.request('claude/getHistory', { cwd: box.workspace, sessionId: chat.sessionId! });
    const stored = history.entries.find((e) => e.id === messageId);
    assert.ok(stored?.kind === 'prompt', 'the CLI took the message up');
    assert.match(stored.text, /what is in this picture/);
    assert.equal(stored.imageCount, 1);
  });

  test('an allowed edit runs and is reported as a file update with its diff', async () => {
    const { chat, rec } = await open();
    const since = rec.mark();
    await chat.send('greet the world');
    const ask = await rec.next('claude/permissionRequest', undefined, { since });
    assert.equal(ask.toolName, 'Edit');
    assert.match(ask.preview ?? '', /^\+print\('hello, world'\)$/m);
    assert.ok(chat.permissionRequests.has(ask.requestId));
    await chat.respondPermission({ requestId: ask.requestId, decision: 'allow' });
    const update = await rec.next('claude/fileUpdated', undefined, { since });
    assert.equal(update.path, path.join(box.workspace, 'hello.py'));
    assert.match(update.diff ?? '', /^-print\('hello'\)$/m);
    const kept = chat.fileContents.get(update.seq);
    assert.deepEqual(kept, {
      path: update.path,
      oldContent: "print('hello')\n",
      newContent: "print('hello, world')\n",
    });
    assert.equal(update.oldContent, null, 'the event stays small: contents are kept by the chat');
    const ended = await rec.next('claude/turnEnded', undefined, { since });
    assert.equal(ended.outcome, 'success');
    assert.equal(fs.readFileSync(path.join(box.workspace, 'hello.py'), 'utf8'), "print('hello, world')\n");
  });

  test('a denied edit leaves the file as it was and tells the model why', async () => {
    const { chat, rec } = await open();
    const since = rec.mark();
    await chat.send('greet the world');
    const ask = await rec.next('claude/permissionRequest', undefined, { since });
    await chat.respondPermission({ requestId: ask.requestId, decision: 'deny', message: 'keep it short' });
    await rec.next('claude/turnEnded', undefined, { since });
    assert.equal(fs.readFileSync(path.join(box.workspace, 'hello.py'), 'utf8'), "print('hello')\n");
    assert.ok(
      !rec
        .notifications()
        .slice(since)
        .some((n) => n.method === 'claude/fileUpdated'),
    );
    assert.equal(chat.permissionRequests.size, 0);
  });

  test('an interrupt mid-stream ends the turn as interrupted and the chat stays usable', async () => {
    const { chat, rec } = await open();
    const since = rec.mark();
    await chat.send('tell me something long');
    await rec.next('claude/delta', (d) => d.kind === 'text', { since });
    await chat.interrupt();
    const ended = await rec.next('claude/turnEnded', undefined, { since });
    assert.equal(ended.outcome, 'interrupted');
    const next = await rec.turn('hello again');
    assert.equal(next.outcome, 'success');
  });

  test("the chat's entries are the daemon's transcript of the channel", async () => {
    const { chat, rec } = await open();
    const since = rec.mark();
    await chat.send('greet the world');
    const ask = await rec.next('claude/permissionRequest', undefined, { since });
    await chat.respondPermission({ requestId: ask.requestId, decision: 'allow' });
    await rec.next('claude/turnEnded', undefined, { since });
    await rec.next('claude/entry', (p) => p.entry.kind === 'turn', { since });
    const daemon = await sidecar.daemon();
    const transcript = await daemon.request('claude/getTranscript', { channelId: chat.channelId! });
    assert.deepEqual(listed(chat.state), transcript.entries);
    const edit = chat.state.entries.find((e) => e.kind === 'tool');
    assert.equal(edit?.kind === 'tool' && edit.permission?.decision, 'allowed');
    assert.deepEqual(edit?.kind === 'tool' && edit.files?.map((f) => [f.added, f.removed]), [[1, 1]]);
  });

  test('a chat that missed notifications catches up from the channel transcript', async () => {
    const { chat, rec } = await open();
    // Lose the answer's entries and deltas on the way, as a broken link would.
    const deliver = chat.notify.bind(chat);
    chat.notify = (method, params) => {
      if (method !== 'claude/entry' && method !== 'claude/delta') deliver(method, params);
    };
    // The status after the turn's footer shows the last gap.
    const caughtUp = new Promise<void>((resolve) =>
      chat.onEvent((e) => {
        if (e.kind === 'transcript' && e.entries.some((entry) => entry.kind === 'turn')) resolve();
      }),
    );
    await rec.turn('hello there');
    await caughtUp;
    const texts = chat.state.entries.flatMap((e) => (e.kind === 'prompt' || e.kind === 'text' ? [e.text] : []));
    assert.deepEqual(texts, ['hello there', GREETING]);
  });

  test('a fork is a new chat with the conversation so far, on its own session', async () => {
    const { chat, rec } = await open();
    await rec.turn('hello there');
    const fork = await sidecar.forkChat(chat);
    assert.notEqual(fork.sessionId, chat.sessionId);
    assert.notEqual(fork.channelId, chat.channelId);
    assert.deepEqual(
      fork.prompts.map((p) => p.text),
      ['hello there'],
      'the fork shows the history it copied',
    );
    const forked = new Recorder(fork);
    const ended = await forked.turn('hello from the fork');
    assert.equal(ended.outcome, 'success');
    assert.ok(sidecar.allChats().includes(fork));
  });

  test('a fork at a message keeps the conversation up to that exchange only', async () => {
    const { chat, rec } = await open();
    await rec.turn('hello one');
    await rec.turn('hello two');
    const first = chat.prompts[0]!.messageId;
    const fork = await sidecar.forkChat(chat, first);
    assert.deepEqual(
      fork.prompts.map((p) => p.text),
      ['hello one'],
    );
    const ended = await new Recorder(fork).turn('hello three');
    assert.equal(ended.outcome, 'success');
  });

  test('rewinding to a message restores the files its turn changed, after a dry run shows them', async () => {
    const { chat, rec } = await open();
    const since = rec.mark();
    const messageId = await chat.send('greet the world');
    const ask = await rec.next('claude/permissionRequest', undefined, { since });
    await chat.respondPermission({ requestId: ask.requestId, decision: 'allow' });
    await rec.next('claude/turnEnded', undefined, { since });
    const file = path.join(box.workspace, 'hello.py');
    const dry = await chat.rewind(messageId, true);
    assert.equal(dry.canRewind, true);
    assert.deepEqual(dry.filesChanged, [file]);
    assert.equal(fs.readFileSync(file, 'utf8'), "print('hello, world')\n", 'a dry run changes nothing');
    const mark = rec.mark();
    await chat.rewind(messageId, false);
    assert.equal(fs.readFileSync(file, 'utf8'), "print('hello')\n");
    const restored = await rec.next('claude/fileUpdated', (u) => u.toolName === 'rewindFiles', { since: mark });
    assert.equal(restored.path, file);
  });

  test('a stored session is resumed with its history, cost and context meter and goes on where it stopped', async () => {
    const first = await open();
    const one = await first.rec.turn('hello there');
    const two = await first.rec.turn('hello again');
    assert.ok(one.costUsd > 0 && two.context, 'the turns cost something and fill the context');
    const sessionId = first.chat.sessionId!;
    await first.chat.close();
    const sessions = await sidecar.listSessions(box.workspace);
    assert.ok(
      sessions.some((s) => s.sessionId === sessionId),
      'the session is listed',
    );
    const resumed = await sidecar.resumeChat(box.workspace, sessionId);
    assert.equal(resumed.sessionId, sessionId);
    assert.deepEqual(
      resumed.state.entries.flatMap((e) => (e.kind === 'prompt' || e.kind === 'text' ? [e.text] : [])),
      ['hello there', GREETING, 'hello again', GREETING],
      'the stored conversation is shown first',
    );
    // The cost and the meter as the live chat showed them, before any new turn.
    assert.ok(Math.abs(resumed.totalCostUsd - two.totalCostUsd) < 1e-9);
    assert.ok(Math.abs(resumed.state.totals.costUsd - two.totalCostUsd) < 1e-9);
    assert.deepEqual(resumed.state.totals.context, two.context);
    const history = new Recorder(resumed);
    const ended = await history.turn('hello once more');
    assert.equal(ended.outcome, 'success');
    assert.ok(Math.abs(ended.totalCostUsd - (two.totalCostUsd + ended.costUsd)) < 1e-9, 'the total goes on');
    assert.deepEqual(resumed.state.totals.context, ended.context);
  });

  test('a resumed chat shows its tools as the live chat did: decision, result, +N -M', async () => {
    const first = await open();
    const since = first.rec.mark();
    await first.chat.send('greet the world');
    const ask = await first.rec.next('claude/permissionRequest', undefined, { since });
    await first.chat.respondPermission({ requestId: ask.requestId, decision: 'allow' });
    await first.rec.next('claude/turnEnded', undefined, { since });
    const live = first.chat.state.entries.find((e) => e.kind === 'tool');
    await first.chat.close();
    const resumed = await sidecar.resumeChat(box.workspace, first.chat.sessionId!);
    const stored = resumed.state.entries.find((e) => e.kind === 'tool');
    assert.ok(live?.kind === 'tool' && stored?.kind === 'tool');
    assert.equal(stored.id, live.id);
    assert.equal(stored.status, 'done');
    assert.equal(stored.permission?.decision, live.permission?.decision);
    assert.deepEqual(stored.result, live.result);
    assert.deepEqual(stored.files, live.files);
  });

  test('when the daemon dies, a new one takes over every chat on the same session, in its mode', async () => {
    const { chat, rec } = await open();
    await rec.turn('hello there');
    // Opened in the default mode, switched since: the new channel runs in the mode of now.
    await chat.setPermissionMode('acceptEdits');
    const sessionId = chat.sessionId;
    const daemon = await sidecar.daemon();
    const mark = rec.mark();
    process.kill(daemon.pid!, 'SIGKILL');
    await rec.event(resumedNotice, { since: mark, what: 'the Resumed notice' });
    assert.equal(chat.sessionId, sessionId);
    assert.notEqual((await sidecar.daemon()).pid, daemon.pid);
    assert.equal(chat.info?.permissionMode, 'acceptEdits', 'the chat keeps the mode it ran in');
    const before = Math.max(
      ...rec
        .notifications()
        .slice(0, mark)
        .map((n) => n.params.seq),
    );
    const since = rec.mark();
    const ended = await rec.turn('hello after the crash');
    const after = rec
      .notifications()
      .slice(since)
      .map((n) => n.params.seq);
    assert.ok(
      after.every((seq) => seq > before),
      'the chat goes on counting its notifications on the new channel',
    );
    assert.equal(ended.outcome, 'success');
    assert.equal(chat.sessionId, sessionId, 'the conversation went on in its session');
  });

  test('after a daemon death each of several chats gets its own notifications again', async () => {
    const a = await open();
    const b = await open();
    await a.rec.turn('hello from a');
    await b.rec.turn('hello from b');
    const daemon = await sidecar.daemon();
    const marks = [a.rec.mark(), b.rec.mark()];
    process.kill(daemon.pid!, 'SIGKILL');
    await Promise.all([
      a.rec.event(resumedNotice, { since: marks[0], what: 'the Resumed notice of a' }),
      b.rec.event(resumedNotice, { since: marks[1], what: 'the Resumed notice of b' }),
    ]);
    const sinceA = b.rec.mark();
    const endedB = await b.rec.turn('hello again from b');
    assert.equal(endedB.outcome, 'success');
    const endedA = await a.rec.turn('hello again from a');
    assert.equal(endedA.outcome, 'success');
    const leaked = b.rec.events
      .slice(sinceA)
      .filter((e) => e.kind === 'notification' && JSON.stringify(e.params).includes('hello again from a'));
    assert.deepEqual(leaked, [], "a's notifications never reach b");
    assert.ok(
      a.rec.events.some((e) => e.kind === 'notification' && JSON.stringify(e.params).includes('hello again from a')),
      'a gets its own',
    );
    assert.notEqual(a.chat.channelId, b.chat.channelId);
  });

  test("the model's editor-tool call is answered by the client's handler", async () => {
    const calls: unknown[] = [];
    await sidecar.dispose();
    sidecar = client(box, {
      initializationOptions: {
        warmPool: { size: 0 },
        editorTools: [{ name: 'getSelection', description: 'The selected text.' }],
      },
      editorTools: {
        getSelection: (args, chat) => {
          calls.push({ args, chat: chat?.id });
          return { text: 'const x = 1;' };
        },
      },
    });
    const { chat, rec } = await open();
    const ended = await rec.turn('look at my selection');
    assert.equal(ended.outcome, 'success');
    assert.deepEqual(calls, [{ args: {}, chat: chat.id }]);
  });

  test('a daemon command that cannot start fails with an error naming the setting', async () => {
    await sidecar.dispose();
    sidecar = client(box, { command: [path.join(box.root, 'no-such-daemon'), '--stdio'] });
    await assert.rejects(sidecar.openChat({ cwd: box.workspace }), (e: unknown) => {
      assert.ok(e instanceof SidecarError);
      assert.equal(e.where, 'daemonCommand');
      assert.match(e.message, /no-such-daemon/);
      return true;
    });
    assert.equal(sidecar.state, 'failed');
  });

  test('bad parameters come back as the daemon error naming the field', async () => {
    await assert.rejects(sidecar.openChat({ cwd: 'relative/path' }), (e: unknown) => {
      assert.ok(e instanceof SidecarError);
      assert.equal(e.errorName, 'invalidParams');
      assert.match(e.message, /cwd/);
      return true;
    });
  });
});

describe('daemon log lines', () => {
  test('keep their level in the output channel', () => {
    assert.equal(daemonLineLevel('2026-11-23 18:03:23,728 INFO claude_sidecar.hub: channel ch-1 started'), 'info');
    assert.equal(daemonLineLevel('2026-11-23 18:03:23,728 WARNING claude_sidecar.channel: slow'), 'warn');
    assert.equal(daemonLineLevel('2026-11-23 18:03:23,728 ERROR claude_sidecar.stdio: boom'), 'error');
    assert.equal(daemonLineLevel('Traceback (most recent call last):'), 'debug');
  });
});
