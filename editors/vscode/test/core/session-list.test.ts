// The session picker's rows, and a long session listed before the daemon read it whole.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { SessionsChangedNotification, SessionSummary } from '../../src/core/protocol.generated';
import { sessionItem } from '../../src/core/session-list';
import { client, Recorder, removeSandbox, sandbox, startModel, type Model } from './harness';
import { SCENARIO } from './scenario';

const summary: SessionSummary = {
  sessionId: 's-1',
  title: 'fix the tests',
  firstPrompt: 'fix the tests',
  updatedAt: '2026-11-21T16:54:37.456Z',
  createdAt: '2026-11-21T16:54:33.433Z',
  messageCount: 8,
  cwd: '/home/ada/shop',
  gitBranch: 'main',
};

describe('the session picker', () => {
  test('a session read whole shows its message count and branch', () => {
    const item = sessionItem(summary, 'en-GB');
    assert.equal(item.label, 'fix the tests');
    assert.equal(item.description, '8 messages · main');
    assert.match(item.detail, / · s-1$/);
  });

  test('a long session not read whole yet shows no count rather than a wrong one', () => {
    assert.equal(sessionItem({ ...summary, partial: true, messageCount: 0 }).description, 'not counted yet · main');
  });

  test('a renamed session shows its custom title', () => {
    assert.equal(sessionItem({ ...summary, customTitle: 'Tests green again' }).label, 'Tests green again');
  });
});

/** Makes the stored session `file` longer than `bytes` by repeating its lines, each copy with
 * fresh ids and on one parent chain (a session kept for days, as the daemon's listing meets it).
 * Returns how many times the session is there now. */
function grow(file: string, sessionId: string, bytes: number): number {
  const lines = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
  // Entry uuids, and the model's message, request and tool use ids (a response is counted once
  // per message id).
  const ids = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\b(?:msg|req|toolu)_\w+/g;
  const renamed = (id: string) =>
    id.includes('_') ? `${id.split('_')[0]}_${randomUUID().replaceAll('-', '')}` : randomUUID();
  const lastEntry = (copy: Record<string, unknown>[]) => copy.findLast((e) => typeof e.uuid === 'string')?.uuid;
  let previous = lastEntry(lines.map((line) => JSON.parse(line) as Record<string, unknown>));
  let size = fs.statSync(file).size;
  let times = 1;
  for (; size <= bytes; times++) {
    const fresh = new Map<string, string>([[sessionId, sessionId]]);
    const copy = lines.map((line) => {
      const entry = JSON.parse(
        line.replace(ids, (id) => fresh.get(id) ?? fresh.set(id, renamed(id)).get(id)!),
      ) as Record<string, unknown>;
      if (entry.parentUuid === null) entry.parentUuid = previous;
      return entry;
    });
    previous = lastEntry(copy);
    const text = copy.map((entry) => JSON.stringify(entry)).join('\n') + '\n';
    fs.appendFileSync(file, text);
    size += Buffer.byteLength(text);
  }
  return times;
}

function sessionFile(home: string, sessionId: string): string {
  const projects = path.join(home, '.claude', 'projects');
  for (const folder of fs.readdirSync(projects)) {
    const file = path.join(projects, folder, `${sessionId}.jsonl`);
    if (fs.existsSync(file)) return file;
  }
  throw new Error(`no stored session ${sessionId} under ${projects}`);
}

describe('listing the sessions of a folder', () => {
  let model: Model;
  before(async () => {
    model = await startModel(SCENARIO, fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-model-')));
  });
  after(async () => model.stop());

  test('a long session comes at once as not counted yet, then exact once the daemon read it', async (t) => {
    const box = sandbox(model);
    const sidecar = client(box);
    try {
      const chat = await sidecar.openChat({ cwd: box.workspace });
      await new Recorder(chat).turn('hello there');
      const sessionId = chat.sessionId!;
      await chat.close();
      if (!sidecar.features?.has('partialListing')) {
        t.skip('the daemon under test does not serve partialListing');
        return;
      }
      const file = sessionFile(box.home, sessionId);
      const [read] = await sidecar.listSessions(box.workspace);
      const times = grow(file, sessionId, 5 * 1024 * 1024);
      const changed = new Promise<SessionsChangedNotification>((resolve) => {
        const listener = sidecar.onSessionsChanged((n) => {
          listener.dispose();
          resolve(n);
        });
      });

      const [first] = await sidecar.listSessions(box.workspace);
      assert.equal(first!.sessionId, sessionId);
      assert.equal(first!.partial, true, 'a 5 MB session is not read whole on the request path');
      assert.deepEqual(await changed, { cwd: box.workspace, sessionIds: [sessionId] });
      const [exact] = await sidecar.listSessions(box.workspace);
      assert.equal(exact?.partial, undefined);
      assert.equal(exact?.messageCount, times * read!.messageCount, 'every copy counted');
    } finally {
      await sidecar.dispose();
      removeSandbox(box);
    }
  });
});
