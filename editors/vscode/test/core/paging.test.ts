// A long chat read a page at a time (the daemon's feature transcriptPaging), against the real
// daemon and CLI: a resumed chat starts with its last page, older pages go above it, every
// entry once. Each test has its own HOME and workspace holding a stored session of 84
// entries (tests/repeated_session.py); the tests that need paging skip when the daemon under
// test lacks it (tests/cross-release.sh runs them against the last release's daemon).

import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import type { SidecarClient } from '../../src/core/client';
import type { DaemonConnection } from '../../src/core/connection';
import {
  client,
  Recorder,
  removeSandbox,
  requireFeature,
  sandbox,
  startModel,
  storeLongSession,
  type Model,
  type Sandbox,
} from './harness';
import { GREETING, SCENARIO } from './scenario';

/** Entries per page here: 84 entries are a last page of 20, then 20, 20, 20 and 4. */
const PAGE = 20;
const COPIES = 12;
const ENTRIES = COPIES * 7;

let model: Model;
let box: Sandbox;
let sidecar: SidecarClient;
let sessionId: string;

before(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-model-'));
  model = await startModel(SCENARIO, dir);
});
after(async () => model.stop());

beforeEach(() => {
  box = sandbox(model);
  sessionId = storeLongSession(box, COPIES);
  sidecar = client(box, { pageEntries: PAGE });
});

/** What each test leaves: its client (and daemon) and its sandbox. Bears being run twice. */
async function cleanUp(): Promise<void> {
  await sidecar.dispose();
  removeSandbox(box);
}

afterEach(cleanUp);

/** The ids of the chat's conversation as the daemon has it: its whole claude/getTranscript. */
async function daemonIds(channelId: string): Promise<string[]> {
  const whole = await (await sidecar.daemon()).request('claude/getTranscript', { channelId });
  return whole.entries.map((e) => e.id);
}

/** Counts the claude/getTranscript requests sent from now on. */
function countTranscriptReads(daemon: DaemonConnection): () => number {
  let reads = 0;
  const request = daemon.request.bind(daemon);
  daemon.request = (method: Parameters<typeof request>[0], params: never) => {
    if (method === 'claude/getTranscript') reads++;
    return request(method, params);
  };
  return () => reads;
}

describe('a long chat, a page at a time', () => {
  test('a resumed chat shows its last page first and knows older entries are left', async (t) => {
    if (!(await requireFeature(t, sidecar, 'transcriptPaging', cleanUp))) return;
    const chat = await sidecar.resumeChat(box.workspace, sessionId);
    const all = await daemonIds(chat.channelId!);
    assert.equal(all.length, ENTRIES);
    assert.deepEqual(
      chat.state.entries.map((e) => e.id),
      all.slice(-PAGE),
    );
    assert.deepEqual(chat.state.older, { more: true, loading: false });
  });

  test('reading older pages up to the top gives every entry exactly once, in order', async (t) => {
    if (!(await requireFeature(t, sidecar, 'transcriptPaging', cleanUp))) return;
    const chat = await sidecar.resumeChat(box.workspace, sessionId);
    const pages: number[] = [];
    for (;;) {
      const page = await chat.loadOlder();
      pages.push(page.loaded);
      if (!page.hasMore) break;
    }
    assert.deepEqual(pages, [20, 20, 20, 4]);
    assert.deepEqual(
      chat.state.entries.map((e) => e.id),
      await daemonIds(chat.channelId!),
    );
  });

  test('at the top no older entries are left and nothing more is read', async (t) => {
    if (!(await requireFeature(t, sidecar, 'transcriptPaging', cleanUp))) return;
    const chat = await sidecar.resumeChat(box.workspace, sessionId);
    while ((await chat.loadOlder()).hasMore);
    assert.deepEqual(chat.state.older, { more: false, loading: false });
    const reads = countTranscriptReads(await sidecar.daemon());
    assert.deepEqual(await chat.loadOlder(), { loaded: 0, hasMore: false });
    assert.equal(reads(), 0);
    assert.equal(chat.state.entries.length, ENTRIES);
  });

  test('a second loadOlder while a page is on its way reads that page only once', async (t) => {
    if (!(await requireFeature(t, sidecar, 'transcriptPaging', cleanUp))) return;
    const chat = await sidecar.resumeChat(box.workspace, sessionId);
    const reads = countTranscriptReads(await sidecar.daemon());
    const first = chat.loadOlder();
    const second = chat.loadOlder();
    assert.equal(chat.state.older.loading, true, 'the state says a page is on its way');
    assert.deepEqual(await Promise.all([first, second]), [
      { loaded: PAGE, hasMore: true },
      { loaded: PAGE, hasMore: true },
    ]);
    assert.equal(reads(), 1);
    const ids = chat.state.entries.map((e) => e.id);
    assert.deepEqual(ids, (await daemonIds(chat.channelId!)).slice(-2 * PAGE));
  });

  test('a turn taken after the last page was read comes once, after the pages read above', async (t) => {
    if (!(await requireFeature(t, sidecar, 'transcriptPaging', cleanUp))) return;
    const chat = await sidecar.resumeChat(box.workspace, sessionId);
    await chat.loadOlder();
    const ended = await new Recorder(chat).turn('hello there');
    assert.equal(ended.outcome, 'success');
    while ((await chat.loadOlder()).hasMore);
    const ids = chat.state.entries.map((e) => e.id);
    const conversation = ids.filter((id) => !id.startsWith('client:'));
    assert.deepEqual(conversation, await daemonIds(chat.channelId!));
    assert.equal(new Set(ids).size, ids.length, 'no entry twice');
    const last = chat.state.entries.filter((e) => e.kind === 'text').at(-1);
    assert.equal(last?.kind === 'text' && last.text, GREETING);
  });

  test('after the daemon restarts, older pages are read from its new channel: every entry once, in order', async (t) => {
    if (!(await requireFeature(t, sidecar, 'transcriptPaging', cleanUp))) return;
    const chat = await sidecar.resumeChat(box.workspace, sessionId);
    // Three pages read: the new channel's pages are read again from its last one, in place.
    await chat.loadOlder();
    await chat.loadOlder();
    const rec = new Recorder(chat);
    const daemon = await sidecar.daemon();
    process.kill(daemon.pid!, 'SIGKILL');
    await rec.event((e) => e.kind === 'notice' && /Resumed/.test(e.text), { what: 'the Resumed notice' });
    assert.notEqual((await sidecar.daemon()).pid, daemon.pid);
    while ((await chat.loadOlder()).hasMore);
    const ids = chat.state.entries.map((e) => e.id).filter((id) => !id.startsWith('client:'));
    assert.deepEqual(ids, await daemonIds(chat.channelId!));
  });

  test('resuming a long chat the daemon has open shows the last page its answer brought, then pages back', async (t) => {
    if (!(await requireFeature(t, sidecar, 'transcriptPaging', cleanUp))) return;
    const first = await sidecar.resumeChat(box.workspace, sessionId);
    const reads = countTranscriptReads(await sidecar.daemon());

    const joined = await sidecar.resumeChat(box.workspace, sessionId);
    const shown = joined.state.entries.filter((e) => !e.id.startsWith('client:')).length;
    const readForIt = reads();
    while ((await joined.loadOlder()).hasMore);

    assert.equal(joined.channelId, first.channelId, 'attached to the open chat');
    assert.equal(shown, PAGE);
    assert.equal(readForIt, 0, 'no transcript read: the answer held the page');
    const ids = joined.state.entries.map((e) => e.id).filter((id) => !id.startsWith('client:'));
    assert.deepEqual(ids, await daemonIds(joined.channelId!));
  });

  test('with paging off a resumed chat shows every entry at once (as with a daemon without paging)', async () => {
    await sidecar.dispose();
    sidecar = client(box, { pageEntries: 0 });
    const chat = await sidecar.resumeChat(box.workspace, sessionId);
    assert.equal(chat.state.entries.length, ENTRIES);
    assert.deepEqual(chat.state.older, { more: false, loading: false });
    assert.deepEqual(await chat.loadOlder(), { loaded: 0, hasMore: false });
  });
});
