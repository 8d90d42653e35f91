// A resumed chat in the page while its CLI starts (issue 43): the page shows the session's end
// from its stored last page before the channel is open, says the chat is starting, keeps what
// it drew when the channel's page comes (the same DOM, the same scroll position), and sends a
// prompt typed meanwhile once the channel is open. The real daemon and CLI through the
// extension's own client (src/core) and feed (src/extension/page-feed.ts), the CLI of the
// resume held by tests/fixtures/held-cli.sh until the test lets it start: no sleeps.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import type { Chat } from '../../src/core/chat';
import type { SidecarClient } from '../../src/core/client';
import { entriesOf, toMessage } from '../../src/core/transcript';
import { PageFeed } from '../../src/extension/page-feed';
import { WHOLE_AT_RESET, type WebviewMessage } from '../../src/shared/webview-messages';
import {
  client,
  holdResumes,
  removeSandbox,
  sandbox,
  startModel,
  storeLongSession,
  type Model,
  type Sandbox,
} from '../core/harness';
import { GREETING, SCENARIO } from '../core/scenario';
import { chatPages } from './chat-pages';
import type { ScriptedHost } from './scripted-host';

/** The client's page size (its default) over a session of 280 entries: a last page taller
 * than the view, older pages left to read. */
const PAGE = 100;
const COPIES = 40;
/** A prompt typed while the CLI starts (the stand-in model greets it), unlike any of the stored session. */
const TYPED = 'hello while Claude starts';

const openPage = chatPages();
let model: Model;
let box: Sandbox;
let sidecar: SidecarClient;
let sessionId: string;
let release: () => void;

before(async () => {
  model = await startModel(SCENARIO, fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-model-')));
});
after(async () => model.stop());

beforeEach(() => {
  box = sandbox(model);
  sessionId = storeLongSession(box, COPIES);
  release = holdResumes(box);
  sidecar = client(box, { pageEntries: PAGE });
});

afterEach(async () => {
  release();
  await sidecar.dispose();
  removeSandbox(box);
});

/**
 * The page as the extension's chat panel feeds it: the chat's state (`reset`) once it is
 * shown, then its events through the extension's feed; the page's requests answered by the
 * chat (send, loadOlder, entries).
 */
async function showIn(host: ScriptedHost, chat: Chat): Promise<void> {
  const deliver = (message: Parameters<ScriptedHost['send']>[0]) => void host.send(message).catch(() => undefined);
  const feed = new PageFeed(deliver);
  await host.page.exposeFunction('__toHost', (message: WebviewMessage) => {
    if (message.type === 'received') feed.received();
    if (message.type !== 'request') return;
    const answer = (result: Promise<unknown>) =>
      result.then(
        (value) => deliver({ type: 'response', id: message.id, result: value ?? null }),
        (e: unknown) => deliver({ type: 'response', id: message.id, error: { message: (e as Error).message } }),
      );
    if (message.op === 'send') void answer(chat.send(message.params.text).then((messageId) => ({ messageId })));
    else if (message.op === 'loadOlder') void answer(chat.loadOlder());
    else if (message.op === 'entries')
      void answer(Promise.resolve({ entries: entriesOf(chat.state, message.params.ids) }));
  });
  await host.page.evaluate(() => {
    const posted = (window as unknown as { __posted: WebviewMessage[] }).__posted;
    const toHost = (window as unknown as { __toHost: (m: WebviewMessage) => void }).__toHost;
    const push = posted.push.bind(posted);
    posted.push = (...messages) => {
      for (const m of messages) toHost(m);
      return push(...messages);
    };
  });
  feed.reset({
    type: 'reset',
    state: toMessage(chat.state, WHOLE_AT_RESET),
    info: chat.info,
    workspaceFolders: [box.workspace],
    allowBypassPermissions: false,
  });
  chat.onEvent((event) => feed.event(event, chat.state.rev));
}

/** Resumes the stored session with its CLI held; resolves with the chat once it is shown
 * (its channel not open), and the resume's promise (open once the CLI is let start). */
async function resumeHeld(): Promise<{ chat: Chat; opened: Promise<Chat> }> {
  let shown: (chat: Chat) => void = () => undefined;
  const early = new Promise<Chat>((resolve) => (shown = resolve));
  const opened = sidecar.resumeChat(box.workspace, sessionId, {}, shown);
  const chat = await Promise.race([
    early,
    opened.then(() => Promise.reject(new Error('the chat was shown only once its channel was open'))),
  ]);
  return { chat, opened };
}

/** Waits until the page drew what it was sent: two animation frames. */
async function drawn(host: ScriptedHost): Promise<void> {
  await host.page.evaluate(
    () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve(null)))),
  );
}

/** The page's status line. */
async function statusText(host: ScriptedHost): Promise<string> {
  return host.page
    .locator('.status-line')
    .evaluate((el) => ((el as HTMLElement).hidden ? '' : (el.querySelector('.status-text')?.textContent ?? '')));
}

/** The texts of the conversation's entries drawn, top to bottom. */
async function drawnTexts(host: ScriptedHost): Promise<string[]> {
  return host.page
    .locator('.entries .chunk > .entry')
    .evaluateAll((els) => els.map((e) => e.querySelector('.user-text, .markdown p')?.textContent.trim() ?? ''));
}

/** The text an entry of the chat is drawn with, as drawnTexts reads it. */
function textOf(entry: Chat['state']['entries'][number]): string {
  if (entry.kind === 'prompt' || entry.kind === 'text') return entry.text.split('\n\n')[0]!.trim();
  return '';
}

describe('a resumed chat in the page while its CLI starts', () => {
  test('shows the end of the stored session at once, saying the chat is starting', async () => {
    const host = await openPage();
    const { chat, opened } = await resumeHeld();
    await showIn(host, chat);
    await drawn(host);
    assert.equal(chat.channelId, undefined, 'the channel is not open');
    assert.equal(await statusText(host), 'Starting Claude…');
    const texts = await drawnTexts(host);
    assert.ok(texts.length > 0, 'entries are drawn');
    const last = chat.state.entries.filter((e) => e.kind === 'prompt' || e.kind === 'text').at(-1)!;
    assert.equal(texts.at(-1), textOf(last), 'the last entry is drawn');
    const atEnd = await host.page
      .locator('.transcript')
      .evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight < 24);
    assert.ok(atEnd, 'the view is at the end');
    release();
    await opened;
  });

  test('draws nothing again once the channel is open: the same nodes, the same scroll position', async () => {
    const host = await openPage();
    const { chat, opened } = await resumeHeld();
    await showIn(host, chat);
    await drawn(host);
    // Scrolled up a little (not near the top: no older page is asked for); from then on every
    // change to the entries drawn is recorded.
    const scrollTop = await host.page.locator('.transcript').evaluate((el) => {
      el.scrollTop = el.scrollHeight - el.clientHeight - 300;
      return el.scrollTop;
    });
    await drawn(host);
    const entries = await host.page.locator('.entry').count();
    await host.page.evaluate(() => {
      const changes: string[] = [];
      (window as unknown as { __changes: string[] }).__changes = changes;
      new MutationObserver((records) => {
        for (const r of records) changes.push(`${r.type} in ${(r.target as HTMLElement).className}`);
      }).observe(document.querySelector('.entries')!, {
        childList: true,
        subtree: true,
        characterData: true,
        attributes: true,
      });
    });
    release();
    await opened;
    assert.ok(chat.channelId, 'the channel is open');
    // The channel's events have reached the page: it no longer says it is starting.
    await host.page.waitForFunction(
      () => document.querySelector('.status-line .status-text')?.textContent !== 'Starting Claude…',
    );
    await drawn(host);
    const after = await host.page.locator('.transcript').evaluate((el) => ({
      scrollTop: el.scrollTop,
      entries: el.querySelectorAll('.entry').length,
      changes: (window as unknown as { __changes: string[] }).__changes,
    }));
    assert.deepEqual(after, { scrollTop, entries, changes: [] });
  });

  test('shows a prompt typed while the chat starts at once, waiting, then the sent one in its place', async () => {
    const host = await openPage();
    const { chat, opened } = await resumeHeld();
    await showIn(host, chat);
    await drawn(host);
    await host.page.locator('textarea.prompt').fill(TYPED);
    await host.page.locator('textarea.prompt').press('Enter');
    const waiting = host.page.locator('.entry.user.queued', { hasText: TYPED });
    await waiting.waitFor({ timeout: 10_000 });
    assert.equal(chat.channelId, undefined, 'shown before the channel was open');
    assert.equal(await waiting.locator('.note').textContent(), 'Waiting: sent once Claude has started');
    // From now on, how many times the prompt is drawn, after every change to the page.
    await host.page.evaluate((typed) => {
      const drawnTimes = () =>
        [...document.querySelectorAll('.entry.user .user-text')].filter((e) => e.textContent === typed).length;
      const counts = new Set<number>();
      (window as unknown as { __counts: Set<number> }).__counts = counts;
      new MutationObserver(() => counts.add(drawnTimes())).observe(document.querySelector('.transcript')!, {
        childList: true,
        subtree: true,
      });
    }, TYPED);
    release();
    await opened;
    await host.page.waitForFunction(
      (greeting) => [...document.querySelectorAll('.entry .markdown p')].some((p) => p.textContent.trim() === greeting),
      GREETING,
      { timeout: 60_000 },
    );
    await drawn(host);
    assert.deepEqual(await drawnTexts(host).then((texts) => texts.filter(Boolean).slice(-2)), [TYPED, GREETING]);
    assert.equal(await host.page.locator('.entry.user.queued').count(), 0, 'no longer waiting');
    const counts = await host.page.evaluate(() => [...(window as unknown as { __counts: Set<number> }).__counts]);
    assert.deepEqual(counts, [1], 'drawn once all along: never twice, never gone');
  });

  test('sends a prompt typed while the chat starts once its channel is open', async () => {
    const host = await openPage();
    const { chat, opened } = await resumeHeld();
    await showIn(host, chat);
    await drawn(host);
    await host.page.locator('textarea.prompt').fill('hello there');
    await host.page.locator('textarea.prompt').press('Enter');
    await host.page.waitForFunction(() =>
      (window as unknown as { __posted: WebviewMessage[] }).__posted.some(
        (m) => m.type === 'request' && m.op === 'send',
      ),
    );
    assert.equal(chat.channelId, undefined, 'sent before the channel was open');
    release();
    await opened;
    await host.page.waitForFunction(
      (greeting) => [...document.querySelectorAll('.entry .markdown p')].some((p) => p.textContent.trim() === greeting),
      GREETING,
      { timeout: 60_000 },
    );
    const texts = await drawnTexts(host);
    assert.deepEqual(texts.filter(Boolean).slice(-2), ['hello there', GREETING]);
    assert.equal(await host.page.locator('.composer-message').textContent(), '', 'no error under the prompt');
  });
});
