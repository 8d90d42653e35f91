// A resumed chat shows its end before its CLI is up (issue 43: a 100,000-entry session's CLI
// takes seconds to start): the session's last page is read from its file (claude/getHistory,
// sent with the newChannel) and shown at once; the channel's own last page, once open, is the
// same and changes nothing. Against the real daemon and CLI, the CLI of each resume held by
// tests/fixtures/held-cli.sh until the test lets it start: no sleeps, no timing luck.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import type { Chat } from '../../src/core/chat';
import type { SidecarClient } from '../../src/core/client';
import type { ChatEvent } from '../../src/core/chat-state';
import { isWaitingPrompt } from '../../src/core/transcript';
import {
  client,
  holdResumes,
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

/** Entries per page here: the stored session's 84 entries are a last page of 20 and four more pages. */
const PAGE = 20;
const COPIES = 12;
const ENTRIES = COPIES * 7;
/** A message typed while the CLI starts (the stand-in model greets it), unlike any prompt of the stored session. */
const TYPED = 'hello while Claude starts';

let model: Model;
let box: Sandbox;
let sidecar: SidecarClient;
let sessionId: string;
let release: () => void;

before(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-model-'));
  model = await startModel(SCENARIO, dir);
});
after(async () => model.stop());

beforeEach(() => {
  box = sandbox(model);
  sessionId = storeLongSession(box, COPIES);
  release = holdResumes(box);
  sidecar = client(box, { pageEntries: PAGE });
});

/** What each test leaves: its client (and daemon) and its sandbox. Bears being run twice. */
async function cleanUp(): Promise<void> {
  release();
  await sidecar.dispose();
  removeSandbox(box);
}

afterEach(cleanUp);

/** The ids of the chat's conversation as the daemon has it: its whole claude/getTranscript. */
async function daemonIds(channelId: string): Promise<string[]> {
  const whole = await (await sidecar.daemon()).request('claude/getTranscript', { channelId });
  return whole.entries.map((e) => e.id);
}

/** What a chat was when it showed its stored page (while its CLI was held). */
interface Early {
  chat: Chat;
  ids: string[];
  entries: Chat['state']['entries'];
  channelId: string | undefined;
  state: string;
  events: Recorder;
}

/**
 * Resumes the stored session with its CLI held; `meanwhile` runs on the chat when it shows
 * its stored page (the CLI still held), then the CLI is let start. Resolves with the chat
 * open and what it was at that moment. (A chat that never shows its stored page stays held
 * until the test lets it start otherwise, or the daemon gives up on the CLI.)
 */
async function resumeHeld(meanwhile: (chat: Chat) => void = () => undefined): Promise<{ early?: Early; chat: Chat }> {
  let early: Early | undefined;
  const chat = await sidecar.resumeChat(box.workspace, sessionId, {}, (shown) => {
    early = {
      chat: shown,
      ids: shown.state.entries.map((e) => e.id),
      entries: [...shown.state.entries],
      channelId: shown.channelId,
      state: shown.state.status.state,
      events: new Recorder(shown),
    };
    meanwhile(shown);
    release();
  });
  return { early, chat };
}

describe('a resumed chat while its CLI starts', () => {
  test('shows the last page of its stored session before its channel is open, as starting', async (t) => {
    if (!(await requireFeature(t, sidecar, 'transcriptPaging', cleanUp))) return;
    const { early, chat } = await resumeHeld();
    assert.ok(early, 'the stored page was shown while the CLI was held');
    assert.equal(early.channelId, undefined, 'the channel was not open yet');
    assert.equal(early.state, 'starting');
    assert.deepEqual(early.ids, (await daemonIds(chat.channelId!)).slice(-PAGE));
    assert.equal(early.chat, chat);
  });

  test('keeps the stored page once its channel is open: the same entries, no event redraws them', async (t) => {
    if (!(await requireFeature(t, sidecar, 'transcriptPaging', cleanUp))) return;
    const { early, chat } = await resumeHeld();
    assert.ok(early);
    const redrawing = (e: ChatEvent) => e.kind === 'transcript' || e.kind === 'snapshot' || e.kind === 'stored';
    assert.deepEqual(early.events.events.filter(redrawing), [], 'no entries were applied again');
    assert.ok(
      chat.state.entries.every((entry, i) => entry === early.entries[i]),
      'the very entry objects shown',
    );
    assert.equal(chat.state.entries.length, PAGE);
    assert.deepEqual(chat.state.older, { more: true, loading: false });
  });

  test('pages older entries from its channel once open: every entry once, in order', async (t) => {
    if (!(await requireFeature(t, sidecar, 'transcriptPaging', cleanUp))) return;
    let asked: Promise<{ loaded: number; hasMore: boolean }> | undefined;
    const { chat } = await resumeHeld((shown) => {
      asked = shown.loadOlder();
      assert.equal(shown.state.older.loading, true, 'the chat says a page is on its way');
    });
    assert.deepEqual(await asked, { loaded: PAGE, hasMore: true });
    while ((await chat.loadOlder()).hasMore);
    const ids = chat.state.entries.map((e) => e.id);
    assert.equal(ids.length, ENTRIES);
    assert.deepEqual(ids, await daemonIds(chat.channelId!));
  });

  test('sends a message typed meanwhile once its channel is open', async (t) => {
    if (!(await requireFeature(t, sidecar, 'transcriptPaging', cleanUp))) return;
    let sent: Promise<string> | undefined;
    const { early, chat } = await resumeHeld((shown) => {
      sent = shown.send('hello there');
    });
    assert.ok(early);
    const messageId = await sent!;
    const ended = await early.events.next('claude/turnEnded', (p) => (p.messageIds ?? []).includes(messageId));
    assert.equal(ended.outcome, 'success');
    const prompt = chat.state.entries.find((e) => e.id === messageId);
    assert.equal(prompt?.kind === 'prompt' && prompt.text, 'hello there');
    const last = chat.state.entries.filter((e) => e.kind === 'text').at(-1);
    assert.equal(last?.kind === 'text' && last.text, GREETING);
  });

  test("shows a message typed meanwhile at once, waiting, then the daemon's entry for it in its place", async (t) => {
    if (!(await requireFeature(t, sidecar, 'transcriptPaging', cleanUp))) return;
    let sent: Promise<string> | undefined;
    let shownAtOnce: Chat['state']['queued'] = [];
    const { early, chat } = await resumeHeld((shown) => {
      sent = shown.send(TYPED);
      shownAtOnce = structuredClone(shown.state.queued);
    });
    assert.ok(early);
    assert.equal(shownAtOnce.length, 1, 'shown before the CLI was let start');
    const waiting = shownAtOnce[0]!;
    assert.equal(waiting.text, TYPED);
    assert.ok(isWaitingPrompt(waiting), 'marked as waiting for Claude to start');
    const messageId = await sent!;
    assert.equal(messageId, waiting.id, 'sent with the id it was shown with');
    await early.events.next('claude/turnEnded', (p) => (p.messageIds ?? []).includes(messageId), { since: 0 });
    const daemonsEntry = early.events.events.some(
      (e) => e.kind === 'notification' && e.method === 'claude/entry' && e.params.entry.id === messageId,
    );
    assert.ok(daemonsEntry, "the daemon's entry for it came");
    const listed = [...chat.state.entries, ...chat.state.queued];
    const prompts = listed.filter((e) => e.kind === 'prompt' && e.text === TYPED);
    assert.deepEqual(
      prompts.map((e) => e.id),
      [messageId],
      'listed once',
    );
    assert.ok(!isWaitingPrompt(prompts[0]!), 'no longer waiting');
    const answer = listed.findLastIndex((e) => e.kind === 'text');
    assert.ok(answer > listed.indexOf(prompts[0]!), 'answered after it');
    assert.equal(listed[answer]?.kind === 'text' && listed[answer].text, GREETING);
  });

  test("replaces its stored page with the channel's when they differ", async (t) => {
    if (!(await requireFeature(t, sidecar, 'transcriptPaging', cleanUp))) return;
    const daemon = await sidecar.daemon();
    const request = daemon.request.bind(daemon);
    // The stored page as of a session that changed since (its first entry gone, one entry
    // the session no longer has at its end).
    daemon.request = (method: Parameters<typeof request>[0], params: never) => {
      const answer = request(method, params);
      if (method !== 'claude/getHistory') return answer;
      return answer.then((page) => ({
        ...(page as object),
        entries: [
          ...(page as { entries: unknown[] }).entries.slice(1),
          { kind: 'text', id: 'msg_gone:0', text: 'a text the session no longer has' },
        ],
      })) as typeof answer;
    };
    const { early, chat } = await resumeHeld();
    assert.ok(early);
    assert.ok(early.ids.includes('msg_gone:0'), 'the stored page was shown');
    assert.deepEqual(
      chat.state.entries.map((e) => e.id),
      (await daemonIds(chat.channelId!)).slice(-PAGE),
      "the channel's page alone",
    );
    assert.ok(
      early.events.events.some((e) => e.kind === 'snapshot'),
      'shown afresh',
    );
  });

  test('opens as before when its stored page cannot be read', async (t) => {
    if (!(await requireFeature(t, sidecar, 'transcriptPaging', cleanUp))) return;
    const daemon = await sidecar.daemon();
    const request = daemon.request.bind(daemon);
    // The stored page refused (as for a session file the daemon cannot find), the resume not;
    // the CLI is let start once it was.
    daemon.request = (method: Parameters<typeof request>[0], params: never) => {
      if (method !== 'claude/getHistory') return request(method, params);
      release();
      return Promise.reject(new Error('sessionNotFound'));
    };
    const { early, chat } = await resumeHeld();
    assert.equal(early, undefined, 'nothing was shown before the channel opened');
    assert.deepEqual(
      chat.state.entries.map((e) => e.id),
      (await daemonIds(chat.channelId!)).slice(-PAGE),
    );
  });

  test('says why when its channel cannot be opened after its stored page was shown', async (t) => {
    // A CLI that finds no conversation to resume (as a session deleted meanwhile): newChannel fails.
    const failing = path.join(box.root, 'no-resume.sh');
    fs.writeFileSync(
      failing,
      `#!/bin/sh\ncase " $* " in *" --resume"*) echo "No conversation found" >&2; exit 1;; esac\nexec "${box.env.CLAUDE_SIDECAR_HELD_CLI}" "$@"\n`,
      { mode: 0o755 },
    );
    holdResumes(box, failing);
    if (!(await requireFeature(t, sidecar, 'transcriptPaging', cleanUp))) return;
    let sent: Promise<string> | undefined;
    let shown: Chat | undefined;
    let waitingAtOnce = 0;
    const opened = resumeHeld((chat) => {
      shown = chat;
      sent = chat.send('hello there');
      sent.catch(() => undefined);
      waitingAtOnce = chat.state.queued.filter(isWaitingPrompt).length;
    });
    await assert.rejects(opened, /failed to start/);
    await assert.rejects(sent!, /failed to start/, 'the message typed meanwhile fails with it');
    assert.ok(shown, 'the stored page was shown');
    assert.equal(waitingAtOnce, 1, 'the message was shown waiting');
    const [why, notSent] = shown.state.entries.slice(-2);
    assert.match(why?.kind === 'notice' ? why.text : '', /Could not open the session: .*failed to start/);
    assert.equal(notSent?.kind === 'notice' && notSent.text, 'Not sent: hello there', 'the message is shown not sent');
    assert.deepEqual(shown.state.queued, [], 'no longer waiting');
    assert.equal(shown.state.status.state, 'new', 'no longer starting');
    assert.equal(shown.state.entries.length, PAGE + 2, 'the stored page stays');
  });
});
