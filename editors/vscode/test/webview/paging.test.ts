// A long chat in the page (headless Chromium, scripted host): the page shows the entries read
// so far, asks the host for the page before as the user nears the top (one request at a
// time, none once the first entry is shown) and draws it above without moving what the user
// looks at.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { initialState, reduce, type ChatEvent, type ChatState } from '../../src/core/chat-state';
import type { ConversationEntry } from '../../src/core/transcript';
import { chatPages } from './chat-pages';
import type { ScriptedHost } from './scripted-host';

const openPage = chatPages();

/** Exchange `i` of a long chat: a prompt and its answer, each a few lines tall. */
function exchange(i: number): ConversationEntry[] {
  return [
    { kind: 'prompt', id: `p${i}`, text: `Question ${i}` },
    { kind: 'text', id: `m${i}:0`, text: `Answer ${i}.\n\nIt has a second paragraph, so that it takes some room.` },
  ];
}

/** Exchanges `from` to `to` (both included), oldest first. */
function exchanges(from: number, to: number): ConversationEntry[] {
  return Array.from({ length: to - from + 1 }, (_, k) => exchange(from + k)).flat();
}

const BOUND: ChatEvent = { kind: 'bound', channelId: 'ch-1', sessionId: 's-1', cwd: '/home/dev/project' };

/** A chat showing exchanges 41 to 60 of 60: its last page, older ones left to read. */
function lastPage(hasOlder = true): ChatState {
  const state = initialState();
  for (const event of [BOUND, { kind: 'transcript', entries: exchanges(41, 60), hasOlder } as ChatEvent]) {
    reduce(state, event);
  }
  return state;
}

async function openWith(state: ChatState): Promise<ScriptedHost> {
  const host = await openPage();
  await host.reset(state);
  return host;
}

/** The texts of the conversation's entries drawn, top to bottom. */
async function drawn(host: ScriptedHost): Promise<string[]> {
  return host.page
    .locator('.entries > .chunk > .entry')
    .evaluateAll((els) => els.map((e) => e.querySelector('.user-text, .markdown p')?.textContent.trim() ?? ''));
}

/** Scrolls the transcript to `top` px (0: its top) and lets the page see it. */
async function scrollTo(host: ScriptedHost, top: number): Promise<void> {
  await host.page.locator('.transcript').evaluate((el, y) => {
    el.scrollTop = y;
    el.dispatchEvent(new Event('scroll'));
  }, top);
  await host.frame();
}

async function loadOlderRequests(host: ScriptedHost): Promise<number> {
  return (await host.posted()).filter((m) => m.type === 'request' && m.op === 'loadOlder').length;
}

/** Where the entry with `text` is on screen (its top, px from the viewport's top). */
async function topOf(host: ScriptedHost, text: string): Promise<number> {
  return host.page
    .locator('.entries > .chunk > .entry', { hasText: text })
    .evaluate((el) => Math.round(el.getBoundingClientRect().top));
}

describe('a long chat, a page at a time', () => {
  it('shows the last page at its end and asks for nothing while the user reads there', async () => {
    const host = await openWith(lastPage());
    const texts = await drawn(host);
    assert.equal(texts.length, 40);
    assert.equal(texts[0], 'Question 41');
    assert.equal(texts.at(-1), 'Answer 60.');
    assert.equal(await loadOlderRequests(host), 0);
  });

  it('asks for the page before near the top, once while it is on its way, and says it is loading', async () => {
    const host = await openWith(lastPage());
    await scrollTo(host, 0);
    await host.request('loadOlder');
    await scrollTo(host, 5);
    await host.events([{ kind: 'olderLoading' }]);
    assert.equal(await host.page.locator('.older-row').innerText(), 'Loading earlier messages…');
    await scrollTo(host, 10);
    await scrollTo(host, 0);
    assert.equal(await loadOlderRequests(host), 1);
  });

  it('draws the page before above, the entry at the top of the view staying where it was on screen', async () => {
    const host = await openWith(lastPage());
    await scrollTo(host, 0);
    const before = await topOf(host, 'Question 41');
    await host.events([{ kind: 'olderLoading' }]);
    await host.events([{ kind: 'olderPage', entries: exchanges(21, 40), beforeId: 'p41', hasOlder: true }]);
    await host.answer('loadOlder', { loaded: 40, hasMore: true });
    await host.frame();
    assert.equal(await topOf(host, 'Question 41'), before);
    assert.notEqual(await host.page.locator('.older-row').innerText(), 'Loading earlier messages…');
    const texts = await drawn(host);
    assert.equal(texts.length, 80);
    assert.equal(texts[0], 'Question 21');
    assert.equal(texts.at(-1), 'Answer 60.');
  });

  it('asks for the page before again once a page was drawn and the view is still at the top', async () => {
    const host = await openWith(lastPage());
    await scrollTo(host, 0);
    await host.events([{ kind: 'olderLoading' }]);
    // A page of entries drawn already (read again on a new channel): nothing moves, so no
    // scroll event comes; the page itself sees that it is still at the top.
    await host.events([{ kind: 'olderPage', entries: exchange(41), beforeId: 'p42', hasOlder: true }]);
    await host.answer('loadOlder', { loaded: 2, hasMore: true });
    await host.request('loadOlder');
    assert.equal(await loadOlderRequests(host), 2);
  });

  it('draws an entry once when the page before holds one drawn already', async () => {
    const host = await openWith(lastPage());
    await scrollTo(host, 0);
    // Exchange 41 changed while the page was on its way: the page has it too.
    const page = [...exchanges(31, 40), ...exchange(41)];
    await host.events([{ kind: 'olderLoading' }]);
    await host.events([{ kind: 'olderPage', entries: page, beforeId: 'p41', hasOlder: true }]);
    await host.answer('loadOlder', { loaded: page.length, hasMore: true });
    await host.frame();
    const texts = await drawn(host);
    assert.equal(new Set(texts).size, texts.length, 'no entry twice');
    assert.deepEqual(
      texts,
      exchanges(31, 60).map((e) => (e.kind === 'prompt' ? e.text : `Answer ${e.id.slice(1, -2)}.`)),
    );
  });

  it('asks for nothing more once the first entry is drawn', async () => {
    const host = await openWith(lastPage());
    await scrollTo(host, 0);
    await host.events([{ kind: 'olderLoading' }]);
    await host.events([{ kind: 'olderPage', entries: exchanges(1, 40), beforeId: 'p41', hasOlder: false }]);
    await host.answer('loadOlder', { loaded: 80, hasMore: false });
    await host.frame();
    await scrollTo(host, 0);
    await scrollTo(host, 5);
    assert.equal(await loadOlderRequests(host), 1);
    assert.equal((await drawn(host))[0], 'Question 1');
    assert.equal(await host.page.locator('.older-row').isVisible(), false, 'nothing is said to be left above');
  });

  it('draws entries far from the view in chunks the browser skips until they come into view', async () => {
    const host = await openWith(lastPage());
    await scrollTo(host, 0);
    await host.events([{ kind: 'olderPage', entries: exchanges(1, 40), beforeId: 'p41', hasOlder: false }]);
    await host.answer('loadOlder', { loaded: 80, hasMore: false });
    await host.frame();
    const chunks = await host.page.locator('.entries > .chunk').evaluateAll((els) => els.map((e) => e.children.length));
    assert.deepEqual(chunks, [50, 30, 40], 'the page read above in chunks of its own, of 50 at most');
    const rendered = (text: string) =>
      host.page
        .locator('.entries > .chunk > .entry', { hasText: text })
        .evaluate((el) => el.checkVisibility({ contentVisibilityAuto: true }));
    await scrollTo(host, 1e6);
    await host.frame();
    assert.equal(await rendered('Answer 1.'), false, 'the first chunk, out of view, is skipped');
    assert.equal(await rendered('Answer 60.'), true);
    await scrollTo(host, 0);
    await host.frame();
    assert.equal(await rendered('Answer 1.'), true, 'in view again, it is drawn');
  });

  it('draws what streams at the end after pages drawn above, every entry once and in order', async () => {
    const host = await openWith(lastPage());
    await scrollTo(host, 0);
    await host.events([{ kind: 'olderPage', entries: exchanges(21, 40), beforeId: 'p41', hasOlder: true }]);
    await host.events([{ kind: 'olderPage', entries: exchanges(1, 20), beforeId: 'p21', hasOlder: false }]);
    let seq = 0;
    const notification = (entry: ConversationEntry): ChatEvent => ({
      kind: 'notification',
      method: 'claude/entry',
      params: { channelId: 'ch-1', seq: ++seq, entry },
    });
    await host.events([
      notification({ kind: 'prompt', id: 'p61', text: 'Question 61' }),
      notification({ kind: 'text', id: 'm61:0', text: 'Answer', streaming: true }),
      {
        kind: 'notification',
        method: 'claude/delta',
        params: { channelId: 'ch-1', seq: ++seq, kind: 'text', index: 0, entryId: 'm61:0', text: ' 61.' },
      },
    ]);
    assert.deepEqual(
      await drawn(host),
      exchanges(1, 61).map((e) => (e.kind === 'prompt' ? e.text : `Answer ${e.id.slice(1, -2)}.`)),
    );
  });

  it('asks for nothing at the top of a chat that has no older entries', async () => {
    const host = await openWith(lastPage(false));
    await scrollTo(host, 0);
    await scrollTo(host, 5);
    assert.equal(await loadOlderRequests(host), 0);
    assert.equal(await host.page.locator('.older-row').isVisible(), false);
  });
});
