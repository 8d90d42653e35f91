// The protocol client core on the shared daemon (`claude-sidecar serve`, reached through
// `claude-sidecar connect`): attaching to a chat another client started, a dropped
// connection made again with exactly what was missed, a permission answered by another
// client. Each test has its own daemon, stand-in model, HOME and workspace.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { Chat } from '../../src/core/chat';
import type { ChatEvent } from '../../src/core/chat-state';
import { DaemonConnection } from '../../src/core/connection';
import type { DaemonStarter, SidecarClient } from '../../src/core/client';
import { SidecarError } from '../../src/core/errors';
import type { HeldEntry } from '../../src/core/transcript';
import {
  assertAllGone,
  client,
  removeSandbox,
  sandbox,
  startModel,
  startShared,
  type Model,
  type Sandbox,
  type SharedDaemon,
} from './harness';

const GREETING = 'Hello from the stand-in model!';
const HELD = 'x'.repeat(80);
const REST = 'z'.repeat(80); // a text block of its own (the hold ends the first)
// "long" streams HELD, then holds the answer until "go on" reaches the model (from another
// chat), then streams REST: the test decides when the answer goes on.
const SCENARIO = {
  rules: [
    { match: '(?i)hello', steps: [[{ text: GREETING }]] },
    {
      match: '^long$',
      steps: [[{ text: HELD }, { wait_for_prompt: '^go on$', timeout: 120 }, { text: REST }]],
      chunk: 2,
    },
    {
      match: 'write it',
      steps: [
        [{ tool_use: { name: 'Write', input: { file_path: '{cwd}/note.txt', content: 'hi\n' } } }],
        [{ text: 'written' }],
      ],
    },
  ],
  default: [[{ text: 'ok' }]],
};

let model: Model;
let box: Sandbox;
let daemon: SharedDaemon;
let clients: SidecarClient[];
let pids: number[];

beforeEach(async () => {
  const dir = fs.mkdtempSync(path.join('/tmp', 'sidecar-model-'));
  // A model per test: a held answer goes on when "go on" reached it since it started.
  model = await startModel(SCENARIO, dir);
  box = sandbox(model);
  daemon = await startShared(box);
  clients = [];
  pids = [daemon.pid];
});

afterEach(async () => {
  for (const c of clients) await c.dispose();
  await daemon.stop();
  await assertAllGone(pids);
  await model.stop();
  removeSandbox(box);
});

/** A client of the shared daemon; `starter` replaces how it starts `connect`. */
function sharedClient(name: string, starter?: DaemonStarter): SidecarClient {
  const c = client(
    box,
    {
      command: daemon.connect,
      shared: true,
      // The test decides when a dropped connection comes back (the gate), not a clock.
      reconnectDelayMs: () => 0,
      initializationOptions: { clientName: name },
    },
    starter,
  );
  clients.push(c);
  notePids(c);
  return c;
}

/** Remembers every CLI and `connect` process the client's chats and connections had. */
function notePids(c: SidecarClient): void {
  c.onChatOpened((chat) => {
    if (chat.pid) pids.push(chat.pid);
    chat.onEvent((e) => {
      if (e.kind === 'bound' && chat.pid) pids.push(chat.pid);
    });
  });
  c.onDaemonState(async (s) => {
    if (s === 'running') pids.push((await c.daemon()).pid!);
  });
}

/** Waits until the chat's state satisfies `ready` (checked now and after each event). */
function until(chat: Chat, ready: (chat: Chat) => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  if (ready(chat)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sub.dispose();
      reject(new Error(`no ${what} within ${timeoutMs} ms`));
    }, timeoutMs);
    const sub = chat.onEvent(() => {
      if (!ready(chat)) return;
      clearTimeout(timer);
      sub.dispose();
      resolve();
    });
  });
}

function texts(chat: Chat): string[] {
  return chat.state.entries.flatMap((e: HeldEntry) => (e.kind === 'text' ? [e.text] : []));
}

/** The ids of the chat's entries the daemon sent (not the client's own notices). */
function daemonEntries(chat: Chat): string[] {
  return chat.state.entries.flatMap((e: HeldEntry) => (e.kind === 'notice' && e.subtype === 'client' ? [] : [e.id]));
}

/** The client's own notices in the chat. */
function notices(chat: Chat): string[] {
  return chat.state.entries.flatMap((e: HeldEntry) => (e.kind === 'notice' && e.subtype === 'client' ? [e.text] : []));
}

const streaming = (chat: Chat) => texts(chat).includes(HELD);
const answered = (chat: Chat) => texts(chat).includes(REST) && chat.state.status.state === 'idle';

/** Lets the held answer go on: "go on" reaches the model from another chat of `c`. */
async function release(c: SidecarClient): Promise<void> {
  const other = await c.openChat({ cwd: box.workspace });
  await other.send('go on');
}

/** Records the seq of every notification the chat applies. */
function seqs(chat: Chat): number[] {
  const seen: number[] = [];
  chat.onEvent((e: ChatEvent) => {
    if (e.kind === 'notification') seen.push(e.params.seq);
  });
  return seen;
}

describe('the client core on the shared daemon', () => {
  test('attach shows a chat another client started, with its history, then live', async () => {
    const first = sharedClient('first');
    const chat = await first.openChat({ cwd: box.workspace });
    await chat.send('hello');
    await until(chat, (c) => c.state.status.state === 'idle' && texts(c).length === 1, 'first answer');
    await chat.send('long');
    await until(chat, streaming, 'the held answer');

    const second = sharedClient('second');
    const channels = await second.listChannels();
    assert.equal(channels.length, 1);
    assert.deepEqual(
      channels[0]!.clients?.map((c) => c.clientName),
      ['first'],
    );
    const watched = await second.attachChat(channels[0]!);
    const history = watched.state.entries.map((e) => (e.kind === 'prompt' || e.kind === 'text' ? e.text : e.kind));
    assert.equal(watched.channelId, chat.channelId);
    assert.equal(watched.sessionId, chat.sessionId);
    assert.equal(watched.state.status.state, 'running');
    await release(second);
    await until(watched, answered, 'the rest of the answer, live');
    await until(chat, answered, 'the rest of the answer in the first client');

    assert.ok(history.includes('hello') && history.includes('Hello from the stand-in model!'), history.join(' | '));
    assert.ok(history.includes('long') && history.includes(HELD), history.join(' | '));
    assert.deepEqual(notices(watched), ['Attached: the chat goes on from here.']);
    assert.deepEqual(texts(watched), ['Hello from the stand-in model!', HELD, REST]);
    assert.deepEqual(texts(watched), texts(chat));
  });

  test('a killed connect mid-stream is made again and the chat gets exactly what it missed', async () => {
    // While the gate is closed, a new connection waits: the test keeps the client away
    // until the answer ended, so it must get the rest by replay.
    let openGate: () => void = () => {};
    let gate: Promise<void> = Promise.resolve();
    const editor = sharedClient('editor', async (options) => {
      await gate;
      return DaemonConnection.start(options);
    });
    const states: string[] = [];
    editor.onDaemonState((s) => states.push(s));
    const chat = await editor.openChat({ cwd: box.workspace });
    const applied = seqs(chat);
    await chat.send('long');
    await until(chat, streaming, 'the held answer');
    const watcher = sharedClient('watcher');
    const watched = await watcher.attachChat((await watcher.listChannels())[0]!);

    gate = new Promise((resolve) => (openGate = resolve));
    const bridge = (await editor.daemon()).pid!;
    process.kill(bridge, 'SIGKILL');
    await until(chat, (c) => c.reconnecting, 'reconnecting');
    assert.equal(chat.state.reconnecting, true);
    // A message sent meanwhile waits for the connection (which the gate keeps away).
    let sent = false;
    const sending = chat.send('hello').then(() => (sent = true));
    await release(watcher);
    await until(watched, answered, 'the answer ended (seen by the watcher)');
    assert.equal(sent, false, 'the message waits while the connection is down');
    openGate();
    await sending;
    const greeted = (c: Chat) => texts(c).includes(GREETING) && c.state.status.state === 'idle';
    await until(chat, greeted, 'the missed rest of the answer, then the answer to the message sent meanwhile');
    await until(watched, greeted, 'the answer to the message, in the watcher');

    assert.deepEqual(texts(chat), [HELD, REST, GREETING], 'nothing lost, nothing doubled');
    assert.deepEqual(texts(chat), texts(watched));
    assert.equal(chat.reconnecting, false);
    assert.equal(chat.state.reconnecting, false);
    assert.deepEqual(
      applied,
      [...applied].sort((a, b) => a - b).filter((s, i, all) => all.indexOf(s) === i),
      'every notification applied once, in order',
    );
    assert.equal(applied.at(-1), watched.seq);
    assert.deepEqual(notices(chat), ['Reconnected to the shared daemon.']);
    assert.deepEqual(states, ['starting', 'running', 'reconnecting', 'running']);
  });

  test('a chat whose missed notifications left the replay window is shown afresh', async () => {
    await daemon.stop();
    daemon = await startShared(box, ['--replay-window', '0.0001']); // about 100 bytes: less than one turn
    pids.push(daemon.pid);
    let openGate: () => void = () => {};
    let gate: Promise<void> = Promise.resolve();
    const editor = sharedClient('editor', async (options) => {
      await gate;
      return DaemonConnection.start(options);
    });
    const chat = await editor.openChat({ cwd: box.workspace });
    await chat.send('long');
    await until(chat, streaming, 'the held answer');
    const watcher = sharedClient('watcher');
    const watched = await watcher.attachChat((await watcher.listChannels())[0]!);

    gate = new Promise((resolve) => (openGate = resolve));
    process.kill((await editor.daemon()).pid!, 'SIGKILL');
    await until(chat, (c) => c.reconnecting, 'reconnecting');
    await release(watcher);
    await until(watched, answered, 'the answer ended (seen by the watcher)');
    openGate();
    await until(chat, answered, 'the chat shown afresh');

    assert.deepEqual(texts(chat), [HELD, REST]);
    assert.deepEqual(daemonEntries(chat), daemonEntries(watched));
    assert.deepEqual(notices(chat), [
      'Reconnected: the daemon no longer had all of what was missed, so the chat is shown afresh.',
    ]);
    assert.equal(chat.state.status.state, 'idle');
  });

  test('a chat of a killed daemon is opened again from its session', async () => {
    let openGate: () => void = () => {};
    let gate: Promise<void> = Promise.resolve();
    const editor = sharedClient('editor', async (options) => {
      await gate;
      return DaemonConnection.start(options);
    });
    const chat = await editor.openChat({ cwd: box.workspace });
    await chat.send('hello');
    await until(chat, (c) => c.state.status.state === 'idle' && texts(c).length === 1, 'the answer');
    const session = chat.sessionId;

    // Kept from connecting until a new daemon serves the socket (else `connect` starts one
    // of its own, which this test would not own).
    gate = new Promise((resolve) => (openGate = resolve));
    await daemon.stop({ kill: true, keep: true }); // its CLI goes with it
    await until(chat, (c) => c.reconnecting, 'reconnecting');
    daemon = await startShared(box, [], daemon.socket);
    pids.push(daemon.pid);
    openGate();
    await until(chat, (c) => notices(c).length === 2, 'the chat reopened');
    await chat.send('hello again');
    await until(chat, (c) => texts(c).length === 2 && c.state.status.state === 'idle', 'an answer after reopening');

    assert.deepEqual(notices(chat), [
      'The chat was not running in the daemon any more: opening its session again.',
      'Reopened from its session: the conversation goes on.',
    ]);
    assert.equal(chat.sessionId, session);
    assert.deepEqual(
      chat.prompts.map((p) => p.text),
      ['hello', 'hello again'],
    );
  });

  test('a permission answered by another client cancels the card with answeredElsewhere', async () => {
    const first = sharedClient('first');
    const chat = await first.openChat({ cwd: box.workspace });
    await chat.send('write it');
    await until(chat, (c) => Object.keys(c.state.pending).length === 1, 'the permission request');
    const second = sharedClient('second');
    const watched = await second.attachChat((await second.listChannels())[0]!);
    const [requestId] = Object.keys(watched.state.pending);
    assert.ok(requestId, 'the pending request came with the attach');
    assert.equal(watched.permissionRequests.get(requestId)?.toolName, 'Write');
    assert.equal(watched.state.status.state, 'awaitingPermission');

    await watched.respondPermission({ requestId, decision: 'allow' });
    await until(chat, (c) => Object.keys(c.state.pending).length === 0, 'the card gone');
    await until(chat, (c) => texts(c).includes('written'), 'the turn after the answer');
    await until(watched, (c) => texts(c).includes('written'), 'the turn after the answer, in the answering client');

    const cancelled = chat.state.entries.length && notices(chat);
    assert.deepEqual(cancelled, ['Write: answered in another editor.']);
    assert.deepEqual(notices(watched), ['Attached: the chat goes on from here.'], 'its own answer is not "elsewhere"');
    assert.equal(chat.permissionRequests.size, 0);
    assert.equal(fs.readFileSync(path.join(box.workspace, 'note.txt'), 'utf8'), 'hi\n');
    await assert.rejects(
      chat.respondPermission({ requestId, decision: 'deny' }),
      (e: unknown) => e instanceof SidecarError && e.errorName === 'permissionRequestNotFound',
    );
  });

  test('resuming a session a running chat holds attaches to that chat', async () => {
    const first = sharedClient('first');
    const chat = await first.openChat({ cwd: box.workspace });
    await chat.send('hello');
    await until(chat, (c) => c.state.status.state === 'idle' && texts(c).length === 1, 'first answer');
    await chat.send('long');
    await until(chat, streaming, 'the held answer');

    const second = sharedClient('second');
    const resumed = await second.resumeChat(box.workspace, chat.sessionId!);
    assert.equal(resumed.channelId, chat.channelId, 'the running chat, not a second CLI');
    assert.equal(resumed.pid, chat.pid);
    await release(second);
    await until(resumed, answered, 'the rest of the answer');

    assert.deepEqual(texts(resumed), ['Hello from the stand-in model!', HELD, REST]);
    assert.deepEqual(notices(resumed), ['This session was still running in the daemon: attached to it.']);
  });

  test('closing with keepRunning detaches: the chat runs on, listed for others', async () => {
    const first = sharedClient('first');
    const chat = await first.openChat({ cwd: box.workspace });
    await chat.send('long');
    await until(chat, streaming, 'the held answer');
    await chat.close(true);
    const second = sharedClient('second');
    const [channel] = await second.listChannels();
    assert.ok(channel, 'the chat still runs');
    assert.equal(channel.clients, undefined, 'nobody attached');
    const watched = await second.attachChat(channel);
    await release(second);
    await until(watched, answered, 'the answer, in the client that attached');
    await watched.close();
    assert.equal((await second.listChannels()).filter((c) => c.channelId === channel.channelId).length, 0);
  });
});

describe('the client core on the private daemon', () => {
  test('attaching is refused, saying what to set', async () => {
    const own = client(box);
    clients.push(own);
    notePids(own);
    const chat = await own.openChat({ cwd: box.workspace });
    const [channel] = await own.listChannels();
    assert.ok(channel);
    assert.equal(channel.channelId, chat.channelId);
    await assert.rejects(own.attachChat(channel), (e: unknown) => {
      assert.ok(e instanceof SidecarError);
      assert.equal(e.errorName, 'notShared');
      assert.equal(e.where, 'claudeSidecar.daemon');
      assert.match(e.message, /needs the shared daemon: set claudeSidecar\.daemon to "shared"/);
      return true;
    });
  });
});
