// The attach list's order: the running chats of this window's folders first.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ChannelSummary } from '../../src/core/protocol.generated';
import { byWorkspace } from '../../src/core/running-chats';

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
