// The Claude Chats list ("who needs you") against the real daemon: every chat of the daemon,
// kept current by claude/watchChannels and claude/channelsChanged, waiting chats first.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, before, beforeEach, test } from 'node:test';
import { ago, ChatRoster, sortedChats, worktreeNameFrom, type WaitingRequest } from '../../src/core/agents';
import { runsIn } from '../../src/core/chat';
import type { SidecarClient } from '../../src/core/client';
import type { ChannelSummary } from '../../src/core/protocol.generated';
import {
  assertAllGone,
  client,
  Recorder,
  removeSandbox,
  requireFeature,
  sandbox,
  startModel,
  type Model,
  type Sandbox,
} from './harness';
import { SCENARIO } from './scenario';

let model: Model;
let box: Sandbox;
let sidecar: SidecarClient;
let roster: ChatRoster;
let pids: number[];

before(async () => {
  model = await startModel(SCENARIO, fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-model-')));
});
after(async () => model.stop());

beforeEach(() => {
  box = sandbox(model);
  sidecar = client(box);
  roster = new ChatRoster(sidecar);
  pids = [];
  sidecar.onChatOpened((chat) =>
    chat.onEvent((e) => {
      if (e.kind === 'bound' && chat.pid) pids.push(chat.pid);
    }),
  );
});

let cleaned = false;
async function cleanUp(): Promise<void> {
  if (cleaned) return;
  cleaned = true;
  roster.dispose();
  await sidecar.dispose();
  await assertAllGone(pids);
  removeSandbox(box);
}
beforeEach(() => (cleaned = false));
afterEach(cleanUp);

/** Waits until the roster's list satisfies `test` (checked now and after each change). */
function until(test: (chats: ChannelSummary[]) => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  if (test(roster.chats())) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sub.dispose();
      reject(new Error(`the list never showed ${what}; it shows ${JSON.stringify(summary(roster.chats()))}`));
    }, timeoutMs);
    const sub = roster.onDidChange(() => {
      if (!test(roster.chats())) return;
      clearTimeout(timer);
      sub.dispose();
      resolve();
    });
  });
}

function summary(chats: ChannelSummary[]): [string, string][] {
  return chats.map((c) => [c.channelId, c.state]);
}

test('the list holds every running chat once watched, and a chat started later comes in', async (t) => {
  if (!(await requireFeature(t, sidecar, 'watchChannels', cleanUp))) return;
  const first = await sidecar.openChat({ cwd: box.workspace });
  await roster.watch();
  assert.deepEqual(
    roster.chats().map((c) => c.channelId),
    [first.channelId],
  );
  const second = await sidecar.openChat({ cwd: box.workspace });
  await until((chats) => chats.some((c) => c.channelId === second.channelId), 'the second chat');
  assert.equal(roster.chat(second.channelId!)?.cwd, box.workspace);
});

test('watched before any daemon runs, the list is read once one starts', async (t) => {
  await roster.watch(false); // no daemon yet: nothing is started for the list
  assert.equal(sidecar.state, 'stopped');
  if (!(await requireFeature(t, sidecar, 'watchChannels', cleanUp))) return;
  const chat = await sidecar.openChat({ cwd: box.workspace });
  await until((chats) => chats.some((c) => c.channelId === chat.channelId), 'the chat');
  assert.equal(roster.watching, true);
});

test('a chat waiting for a permission comes first, is counted and is told of once', async (t) => {
  if (!(await requireFeature(t, sidecar, 'watchChannels', cleanUp))) return;
  const idle = await sidecar.openChat({ cwd: box.workspace });
  const asking = await sidecar.openChat({ cwd: box.workspace, permissionMode: 'default' });
  await roster.watch();
  const told: WaitingRequest[] = [];
  roster.onRequestWaiting((w) => told.push(w));
  const recorder = new Recorder(asking);
  const since = recorder.mark();
  await asking.send('write the notes');
  const request = await recorder.next('claude/permissionRequest', () => true, { since });
  await until(() => roster.waiting() === 1, 'a chat waiting');
  assert.deepEqual(
    roster.chats().map((c) => c.channelId),
    [asking.channelId, idle.channelId],
  );
  assert.equal(roster.waiting(), 1);
  assert.equal(roster.chats()[0]?.lastPrompt, 'write the notes');
  // Later changes of the same chat (its lastEventAt, a refresh) do not tell of it again.
  await roster.refresh();
  assert.deepEqual(
    told.map((w) => [w.channel.channelId, w.request.requestId]),
    [[asking.channelId, request.requestId]],
  );
  await asking.respondPermission({ requestId: request.requestId, decision: 'allow' });
  await until(() => roster.waiting() === 0, 'no chat waiting');
});

test('a closed chat leaves the list', async (t) => {
  if (!(await requireFeature(t, sidecar, 'watchChannels', cleanUp))) return;
  const staying = await sidecar.openChat({ cwd: box.workspace });
  const leaving = await sidecar.openChat({ cwd: box.workspace });
  await roster.watch();
  await until((chats) => chats.length === 2, 'both chats');
  await leaving.close();
  await until((chats) => chats.length === 1, 'one chat');
  assert.deepEqual(
    roster.chats().map((c) => c.channelId),
    [staying.channelId],
  );
});

test('after unwatch the list is empty and changes no longer come in', async (t) => {
  if (!(await requireFeature(t, sidecar, 'watchChannels', cleanUp))) return;
  await sidecar.openChat({ cwd: box.workspace });
  await roster.watch();
  await roster.unwatch();
  await sidecar.openChat({ cwd: box.workspace });
  // A request after the new chat: the daemon answers in order, so a change sent would be here by now.
  await sidecar.listChannels();
  assert.deepEqual(roster.chats(), []);
  assert.equal(roster.watching, false);
});

function channel(
  channelId: string,
  state: ChannelSummary['state'],
  extra: Partial<ChannelSummary> = {},
): ChannelSummary {
  return { channelId, state, cwd: '/w', sessionId: `s-${channelId}`, pid: 1, ...extra };
}

test('the order: waiting, then running and starting, idle, exited; oldest chat first in each', () => {
  const chats = [
    channel('ch-1', 'exited', { exit: { code: 0, signal: null, stderrTail: '' } }),
    channel('ch-2', 'idle'),
    channel('ch-10', 'running'),
    channel('ch-3', 'awaitingPermission'),
    channel('ch-4', 'starting'),
  ];
  assert.deepEqual(
    sortedChats(chats).map((c) => c.channelId),
    ['ch-3', 'ch-4', 'ch-10', 'ch-2', 'ch-1'],
  );
});

test('ages read in the largest whole unit', () => {
  assert.deepEqual(
    [ago(12.7), ago(185), ago(7300), ago(90000), ago(-3)],
    ['12 s ago', '3 min ago', '2 h ago', '1 d ago', '0 s ago'],
  );
});

test("a worktree's name defaults to the prompt's first words, lower case and hyphenated", () => {
  assert.equal(worktreeNameFrom('Fix the login form, please: it breaks'), 'fix-the-login-form');
  assert.equal(worktreeNameFrom('  !!  '), '');
});

test("a worktree chat runs in its folder's place in the worktree, what its paths are shown from", () => {
  const worktree = {
    name: 'login-fix',
    path: '/repo/.claude/worktrees/login-fix',
    branch: 'worktree-login-fix',
    baseRef: 'head',
    baseCommit: 'abc',
    baseBranch: 'main',
    root: '/repo',
  };
  assert.equal(runsIn('/repo', worktree), '/repo/.claude/worktrees/login-fix');
  assert.equal(runsIn('/repo/web/app', worktree), '/repo/.claude/worktrees/login-fix/web/app');
  assert.equal(runsIn('/repo/.claude/worktrees/login-fix/web', worktree), '/repo/.claude/worktrees/login-fix/web');
  assert.equal(runsIn('/repository', worktree), '/repo/.claude/worktrees/login-fix', 'a name that only starts alike');
  assert.equal(runsIn('/repo', null), '/repo');
});
