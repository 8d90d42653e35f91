// The attach list: the running chats of this window's folders, the others on request.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ChannelSummary } from '../../src/core/protocol.generated';
import { attachList, byWorkspace } from '../../src/core/running-chats';

function chat(channelId: string, cwd: string): ChannelSummary {
  return { channelId, cwd, state: 'idle', sessionId: `s-${channelId}`, pid: 1 };
}

test('chats in a workspace folder or below it are here, the rest elsewhere, in their order', () => {
  const chats = [chat('ch-1', '/home/u/other'), chat('ch-2', '/home/u/shop/api'), chat('ch-3', '/home/u/shop')];
  const { here, elsewhere } = byWorkspace(chats, ['/home/u/shop']);
  assert.deepEqual(
    here.map((c) => c.channelId),
    ['ch-2', 'ch-3'],
  );
  assert.deepEqual(
    elsewhere.map((c) => c.channelId),
    ['ch-1'],
  );
});

test('a folder whose name only starts like a workspace folder is elsewhere', () => {
  const { here, elsewhere } = byWorkspace([chat('ch-1', '/home/u/shop-old')], ['/home/u/shop']);
  assert.deepEqual([here.length, elsewhere.length], [0, 1]);
});

test('without workspace folders every chat is elsewhere', () => {
  const { here, elsewhere } = byWorkspace([chat('ch-1', '/tmp/x')], []);
  assert.deepEqual([here.length, elsewhere.length], [0, 1]);
});

/** The attach list as headings and channel ids, and the number left out. */
function shown(list: ReturnType<typeof attachList>): [string[], number] {
  return [list.groups.map((g) => `${g.heading ?? '-'}: ${g.channels.map((c) => c.channelId).join(' ')}`), list.hidden];
}

test("the attach list shows this workspace's chats only, and says how many of other folders it leaves out", () => {
  const chats = [chat('ch-1', '/home/u/other'), chat('ch-2', '/home/u/shop'), chat('ch-3', '/srv/x')];
  assert.deepEqual(shown(attachList(chats, ['/home/u/shop'], false)), [['This workspace: ch-2'], 2]);
});

test('asked for all, the attach list shows the other folders after this workspace, under their heading', () => {
  const chats = [chat('ch-1', '/home/u/other'), chat('ch-2', '/home/u/shop'), chat('ch-3', '/srv/x')];
  assert.deepEqual(shown(attachList(chats, ['/home/u/shop'], true)), [
    ['This workspace: ch-2', 'Other folders: ch-1 ch-3'],
    0,
  ]);
});

test('with no chat of this workspace running, the others are shown as other folders', () => {
  const chats = [chat('ch-1', '/home/u/other')];
  assert.deepEqual(shown(attachList(chats, ['/home/u/shop'], false)), [['Other folders: ch-1'], 0]);
});

test('a window without a folder lists every chat, under no heading', () => {
  const chats = [chat('ch-1', '/home/u/other'), chat('ch-2', '/srv/x')];
  assert.deepEqual(shown(attachList(chats, [], false)), [['-: ch-1 ch-2'], 0]);
});

test("with only this workspace's chats running, nothing is left out", () => {
  assert.deepEqual(shown(attachList([chat('ch-1', '/home/u/shop/api')], ['/home/u/shop'], true)), [
    ['This workspace: ch-1'],
    0,
  ]);
});
