// A long chat in the page (headless Chromium, scripted host): the page shows the entries read
// so far, asks the host for the page before as the user nears the top (one request at a
// time, none once the first entry is shown) and draws it above without moving what the user
// looks at. The DOM holds the entries of a few chunks near the view however many were read:
// what is in it is checked a screen at a time, from the top to the end. So does the page's
// heap: the entries far from the view are kept by id alone and asked for again from the host
// when they come back (checked in a heap snapshot of the page).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { initialState, reduce, type ChatEvent, type ChatState } from '../../src/core/chat-state';
import type { ConversationEntry } from '../../src/core/transcript';
import { IdMap } from '../../src/core/id-map';
import { CHUNK } from '../../src/webview/chunk-window';
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

/** A chat showing exchanges `from` (41) to `to` (60): its last page, older ones left to read. */
function lastPage(hasOlder = true, from = 41, to = 60): ChatState {
  const state = initialState();
  for (const event of [BOUND, { kind: 'transcript', entries: exchanges(from, to), hasOlder } as ChatEvent]) {
    reduce(state, event);
  }
  return state;
}

/** The texts of exchanges `from` to `to` as `drawn` reads them. */
function textsOf(from: number, to: number): string[] {
  return exchanges(from, to).map((e) => (e.kind === 'prompt' ? e.text : `Answer ${e.id.slice(1, -2)}.`));
}

async function openWith(state: ChatState): Promise<ScriptedHost> {
  const host = await openPage();
  await host.reset(state);
  return host;
}

/** The texts of the conversation's entries drawn, top to bottom. */
async function drawn(host: ScriptedHost): Promise<string[]> {
  return host.page
    .locator('.entries .chunk > .entry')
    .evaluateAll((els) => els.map((e) => e.querySelector('.user-text, .markdown p')?.textContent.trim() ?? ''));
}

/** The entry elements in the page, nested ones included. */
async function entryElements(host: ScriptedHost): Promise<number> {
  return host.page.locator('.entry').count();
}

/**
 * Checks that the page shows the entries `expected` (their texts, top to bottom) to a user
 * scrolling from the top to the end a screen at a time: at each stop the entries drawn are
 * in the conversation's order, none twice, and each entry is drawn at some stop.
 */
async function showsEveryEntry(host: ScriptedHost, expected: string[]): Promise<void> {
  const at = new Map(expected.map((text, i) => [text, i]));
  const seen = new Set<string>();
  for (let top = 0; ;) {
    await scrollTo(host, top);
    await host.frame();
    const texts = await drawn(host);
    const places = texts.map((text) => at.get(text) ?? -1);
    assert.ok(!places.includes(-1), `only entries of the conversation: ${texts.join(', ')}`);
    assert.ok(
      places.every((place, i) => i === 0 || place > places[i - 1]!),
      `in order, none twice: ${texts.join(', ')}`,
    );
    for (const text of texts) seen.add(text);
    const box = await host.page
      .locator('.transcript')
      .evaluate((el) => ({ top: el.scrollTop, height: el.clientHeight, end: el.scrollHeight }));
    if (box.top + box.height >= box.end - 1) break;
    top = box.top + box.height;
  }
  assert.deepEqual(
    expected.filter((text) => !seen.has(text)),
    [],
    'every entry is drawn on the way',
  );
}

/**
 * Scrolls to the top again and again as a user dragging the scroll bar up, each time answering
 * the page's request with the page before (`size` exchanges) until exchange 1 is read.
 * Returns the entry elements in the page after each page.
 */
async function scrollToFirst(host: ScriptedHost, first: number, size: number): Promise<number[]> {
  const counts: number[] = [];
  for (let to = first - 1; to >= 1; to -= size) {
    const from = Math.max(1, to - size + 1);
    await scrollTo(host, 0);
    await host.request('loadOlder');
    await host.events([{ kind: 'olderLoading' }]);
    await host.events([
      { kind: 'olderPage', entries: exchanges(from, to), beforeId: `p${to + 1}`, hasOlder: from > 1 },
    ]);
    await host.answer('loadOlder', { loaded: (to - from + 1) * 2, hasMore: from > 1 });
    await host.frame();
    counts.push(await entryElements(host));
  }
  return counts;
}

/** Scrolls the transcript to `top` px (0: its top) and lets the page see it. */
async function scrollTo(host: ScriptedHost, top: number): Promise<void> {
  await host.page.locator('.transcript').evaluate((el, y) => {
    el.scrollTop = y;
    el.dispatchEvent(new Event('scroll'));
  }, top);
  await host.frame();
}

/**
 * Scrolls up a screen at a time from the end to the top, then down again, checking at each
 * stop that the first entry in view is where the scroll put it once the page has fitted the
 * chunks (drawn, dropped, drawn in parts). Returns the first entry drawn at each stop.
 */
async function stopsInPlace(host: ScriptedHost): Promise<string[]> {
  // The browser's own scroll anchoring off (it does not act at the very top, where pages
  // are put): the page keeps the view itself.
  await host.page.addStyleTag({ content: '.transcript { overflow-anchor: none; }' });
  const height = await host.page.locator('.transcript').evaluate((el) => el.clientHeight);
  const firstDrawn: string[] = [];
  const end = await host.page.locator('.transcript').evaluate((el) => el.scrollTop);
  const stops = Array.from({ length: Math.ceil(end / height) }, (_, k) => end - (k + 1) * height);
  for (const y of [...stops, ...stops.reverse()]) {
    const before = await host.page.locator('.transcript').evaluate((el, y) => {
      el.scrollTop = Math.max(0, y);
      el.dispatchEvent(new Event('scroll'));
      const view = el.getBoundingClientRect().top;
      const first = [...el.querySelectorAll('.entries .chunk > .entry')].find(
        (e) => e.getBoundingClientRect().bottom > view,
      )!;
      return { text: first.textContent, top: Math.round(first.getBoundingClientRect().top) };
    }, y);
    await host.frame();
    await host.frame();
    const after = await host.page
      .locator('.entries .chunk > .entry', { hasText: before.text })
      .first()
      .evaluate((el) => Math.round(el.getBoundingClientRect().top));
    // Within a pixel: the scroll position is whole pixels, the entries' tops are not.
    assert.ok(Math.abs(after - before.top) <= 1, `${before.text} stays where it was: ${before.top}, ${after}`);
    firstDrawn.push((await drawn(host))[0]!);
  }
  return firstDrawn;
}

async function loadOlderRequests(host: ScriptedHost): Promise<number> {
  return (await host.posted()).filter((m) => m.type === 'request' && m.op === 'loadOlder').length;
}

/** A heap snapshot of the page (taken after a full GC), as DevTools' Memory tab reads it. */
interface HeapSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

async function heapSnapshot(host: ScriptedHost): Promise<HeapSnapshot> {
  const cdp = await host.page.context().newCDPSession(host.page);
  const chunks: string[] = [];
  cdp.on('HeapProfiler.addHeapSnapshotChunk', ({ chunk }) => chunks.push(chunk));
  await cdp.send('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
  await cdp.detach();
  return JSON.parse(chunks.join('')) as HeapSnapshot;
}

/**
 * The answers of exchanges (their text, whole: "Answer N.\n\nIt has…") the page's heap holds:
 * the text entries it keeps whole. The DOM holds the paragraphs of those drawn apart, never
 * the whole text.
 */
function answersHeld(heap: HeapSnapshot): number {
  return new Set(heap.strings.filter((s) => /^Answer \d+\.\n\nIt has a second paragraph/.test(s))).size;
}

/**
 * The bytes of the page's chat state's `revs` (an IdMap, entry id -> rev) for its keys: the
 * size of the hash table behind it, found as the object that has `revs`, `at` and `shift`. (A heap
 * snapshot lists no small numbers, so the keys are not counted one by one.)
 */
function revsBytes(heap: HeapSnapshot): number {
  const { meta } = heap.snapshot;
  const [nodeFields, edgeFields] = [meta.node_fields.length, meta.edge_fields.length];
  const [edgeCount, selfSize] = [meta.node_fields.indexOf('edge_count'), meta.node_fields.indexOf('self_size')];
  const [edgeType, edgeName, edgeTo] = [
    meta.edge_fields.indexOf('type'),
    meta.edge_fields.indexOf('name_or_index'),
    meta.edge_fields.indexOf('to_node'),
  ];
  const edgeTypes = meta.edge_types[0];
  // Each node's first edge: the edges are listed node after node.
  const firstEdge = new Map<number, number>();
  for (let node = 0, edge = 0; node < heap.nodes.length; node += nodeFields) {
    firstEdge.set(node, edge);
    edge += heap.nodes[node + edgeCount]! * edgeFields;
  }
  /** A node's property and internal edges, by name (-> the node they lead to). */
  const edgesOf = (node: number): Map<string, number> => {
    const named = new Map<string, number>();
    for (let k = 0, edge = firstEdge.get(node)!; k < heap.nodes[node + edgeCount]!; k++, edge += edgeFields) {
      const type = edgeTypes[heap.edges[edge + edgeType]!];
      if (type === 'property' || type === 'internal') {
        named.set(heap.strings[heap.edges[edge + edgeName]!]!, heap.edges[edge + edgeTo]!);
      }
    }
    return named;
  };
  for (const node of firstEdge.keys()) {
    const named = edgesOf(node);
    if (!['revs', 'at', 'entries', 'queued'].every((name) => named.has(name))) continue;
    // An IdMap: its buckets (a Map), and their hash table.
    const buckets = edgesOf(named.get('revs')!).get('buckets');
    const table = buckets === undefined ? undefined : edgesOf(buckets).get('table');
    if (table === undefined) throw new Error("the chat state's revs have no hash table: not an IdMap?");
    return heap.nodes[table + selfSize]!;
  }
  throw new Error('no chat state in the heap snapshot');
}

/**
 * The strings of the heap's string table (V8's internalized strings, which every major GC
 * walks as roots) that `id` matches: a string becomes one as a Map's key, a Set's member or an
 * object's property name.
 */
function internalized(heap: HeapSnapshot, id: RegExp): number {
  const { meta } = heap.snapshot;
  const [nodeFields, edgeFields] = [meta.node_fields.length, meta.edge_fields.length];
  const [nodeName, edgeCount] = [meta.node_fields.indexOf('name'), meta.node_fields.indexOf('edge_count')];
  const edgeTo = meta.edge_fields.indexOf('to_node');
  const children = (node: number): number[] => {
    let edge = 0;
    for (let n = 0; n < node; n += nodeFields) edge += heap.nodes[n + edgeCount]! * edgeFields;
    return Array.from({ length: heap.nodes[node + edgeCount]! }, (_, k) => heap.edges[edge + k * edgeFields + edgeTo]!);
  };
  const named = (nodes: number[], name: string) => nodes.find((n) => heap.strings[heap.nodes[n + nodeName]!] === name);
  const roots = named(children(0), '(GC roots)');
  const table = roots === undefined ? undefined : named(children(roots), '(Internalized strings)');
  if (table === undefined) throw new Error('no string table in the heap snapshot');
  return children(table).filter((n) => id.test(heap.strings[heap.nodes[n + nodeName]!]!)).length;
}

/** Each entry drawn on the way from the top to the end, a screen at a time: its markup, by its text. */
async function markupOnTheWay(host: ScriptedHost): Promise<Map<string, string>> {
  const markup = new Map<string, string>();
  for (let top = 0; ;) {
    await scrollTo(host, top);
    const drawnNow = await host.page
      .locator('.entries .chunk > .entry')
      .evaluateAll((els) =>
        els.map((e) => [e.querySelector('.user-text, .markdown p')?.textContent.trim() ?? '', e.outerHTML] as const),
      );
    for (const [text, html] of drawnNow) markup.set(text, html);
    const box = await host.page
      .locator('.transcript')
      .evaluate((el) => ({ top: el.scrollTop, height: el.clientHeight, end: el.scrollHeight }));
    if (box.top + box.height >= box.end - 1) return markup;
    top = box.top + box.height;
  }
}

/** Where the entry with `text` is on screen (its top, px from the viewport's top). */
async function topOf(host: ScriptedHost, text: string): Promise<number> {
  return host.page
    .locator('.entries .chunk > .entry', { hasText: text })
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
    await showsEveryEntry(host, textsOf(21, 60));
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
    assert.deepEqual(texts, textsOf(31, 60));
  });

  it('puts a page that reaches in among the entries drawn in its place among them', async () => {
    const host = await openWith(lastPage());
    await scrollTo(host, 0);
    // Exchange 45 and an entry new to the page, before exchange 46: inside the chunk drawn.
    const page: ConversationEntry[] = [...exchange(45), { kind: 'prompt', id: 'p45b', text: 'Question 45b' }];
    await host.events([{ kind: 'olderPage', entries: page, beforeId: 'p46', hasOlder: true }]);
    const texts = await drawn(host);
    assert.deepEqual(texts.slice(8, 12), ['Question 45', 'Answer 45.', 'Question 45b', 'Question 46']);
    assert.equal(texts.length, 41);
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
    await showsEveryEntry(host, textsOf(1, 61));
  });

  it('loads every entry once and in order when scrolled to the top of a long chat', async () => {
    const host = await openWith(lastPage(true, 451, 500));
    await scrollToFirst(host, 451, 50);
    await scrollTo(host, 0);
    await host.screenshot('long-chat-top');
    assert.equal(await loadOlderRequests(host), 9);
    assert.equal(await host.page.locator('.older-row').isVisible(), false);
    await showsEveryEntry(host, textsOf(1, 500));
  });

  it('holds the entries of a few chunks in the page however many are read', async () => {
    const host = await openWith(lastPage(true, 951, 1000));
    const counts = await scrollToFirst(host, 951, 50);
    // The chunks within three screens of the view, and the last (where answers stream in).
    assert.ok(Math.max(...counts) <= 4 * CHUNK, `entry elements after each page: ${counts.join(' ')}`);
    const early = Math.max(...counts.slice(0, 3));
    assert.ok(counts.at(-1)! <= early, `no more after 2,000 entries than after 300: ${counts.join(' ')}`);
  });

  it('holds whole the entries of a few chunks after the user scrolled to the first of 10,000', async () => {
    const host = await openWith(lastPage(true, 4951, 5000));
    await scrollToFirst(host, 4951, 250);
    await scrollTo(host, 0);
    assert.deepEqual((await drawn(host)).slice(0, 2), ['Question 1', 'Answer 1.']);
    const heap = await heapSnapshot(host);
    const held = answersHeld(heap);
    // Those of the chunks drawn (within three screens of the view) and of the last.
    assert.ok(held * 2 <= 5 * CHUNK, `answers held whole: ${held} of 5000`);
    // Nor a rev for each of the 10,000 entries (a table of ~10,000 keys: ~240 KB and more).
    assert.ok(revsBytes(heap) < 32 * 1024, `revs: ${revsBytes(heap)} bytes`);
    // Nor the ids of the entries read in V8's string table (the page's index: issue 43).
    const ids = internalized(heap, /^(p\d+|m\d+:0)$/);
    assert.ok(ids < 500, `entry ids in the string table: ${ids} of 10,000`);
  });

  it('draws a chunk it let go of again as it was, once the host gave its entries back', async () => {
    const host = await openWith(lastPage(true, 151, 200));
    await scrollToFirst(host, 151, 50);
    const first = await markupOnTheWay(host);
    const asked = host.entriesAsked;
    const again = await markupOnTheWay(host);
    assert.ok(host.entriesAsked - asked >= 300, `entries asked for again: ${host.entriesAsked - asked}`);
    assert.equal(first.size, 400, 'every entry drawn on the way');
    assert.deepEqual(again, first);
  });

  it('draws a change to an entry it let go of and drew again (it keeps no rev for it meanwhile)', async () => {
    const host = await openWith(lastPage(true, 151, 200));
    await scrollToFirst(host, 151, 50);
    // Exchange 100's chunk was let go of on the way up; a screen at a time down, it is drawn again.
    const asked = host.entriesAsked;
    for (let top = 0, screens = 0; !(await drawn(host)).includes('Answer 100.'); screens++) {
      assert.ok(screens < 100, 'exchange 100 is drawn on the way down');
      await scrollTo(host, top);
      await host.frame();
      top += await host.page.locator('.transcript').evaluate((el) => el.clientHeight);
    }
    assert.ok(host.entriesAsked > asked, 'its entries were asked for again');
    const text = 'Answer 100, changed.\n\nIt has a second paragraph, so that it takes some room.';
    await host.events([
      {
        kind: 'notification',
        method: 'claude/entry',
        params: { channelId: 'ch-1', seq: 1, entry: { kind: 'text', id: 'm100:0', text } },
      },
    ]);
    const texts = await drawn(host);
    assert.ok(texts.includes('Answer 100, changed.') && !texts.includes('Answer 100.'), texts.join(', '));
  });

  it('opens a long chat sent with its last entries whole and asks only for those it draws', async () => {
    const host = await openWith(lastPage(false, 1, 5000));
    assert.ok(host.entriesAsked <= 2 * CHUNK, `entries asked for: ${host.entriesAsked}`);
    const heap = await heapSnapshot(host);
    assert.ok(answersHeld(heap) * 2 <= 5 * CHUNK);
    // The host's state has a rev for each of the 10,000 entries; the page keeps those it holds whole.
    assert.ok(revsBytes(heap) < 32 * 1024, `revs: ${revsBytes(heap)} bytes`);
    assert.equal((await drawn(host)).at(-1), 'Answer 5000.');
    await scrollTo(host, 0);
    assert.deepEqual((await drawn(host)).slice(0, 2), ['Question 1', 'Answer 1.']);
  });

  it('draws a page of many entries read at once only where the user looks', async () => {
    const host = await openWith(lastPage());
    await scrollTo(host, 0);
    await host.events([{ kind: 'olderPage', entries: exchanges(1, 40), beforeId: 'p41', hasOlder: true }]);
    await host.events([{ kind: 'olderPage', entries: exchanges(-1999, 0), beforeId: 'p1', hasOlder: false }]);
    assert.ok((await entryElements(host)) <= 4 * CHUNK);
    const texts = await drawn(host);
    assert.ok(texts.includes('Answer 40.') && texts.includes('Question 41'), 'the entries at the view are drawn');
  });

  it('opens a whole long chat with its end drawn and little else', async () => {
    const host = await openWith(lastPage(false, 1, 2000));
    assert.ok((await entryElements(host)) <= 2 * CHUNK);
    const end = await host.page
      .locator('.entries .chunk > .entry', { hasText: 'Answer 2000.' })
      .evaluate((el) => el.getBoundingClientRect().bottom <= window.innerHeight);
    assert.equal(end, true, 'the last answer is on screen');
  });

  it('keeps the entry in view in place as chunks far from it are dropped and drawn again', async () => {
    const host = await openWith(lastPage(false, 1, 200));
    const firstDrawn = await stopsInPlace(host);
    assert.ok(
      firstDrawn[0] !== 'Question 1' && firstDrawn.includes('Question 1') && firstDrawn.at(-1) !== 'Question 1',
      `chunks were dropped and drawn on the way: ${firstDrawn.join(', ')}`,
    );
  });

  it('draws a chunk an entry per frame when its entries take longer than a frame, the entry in view staying put', async () => {
    const host = await openPage();
    // A budget of 0: each frame draws one entry beyond the last chunk, whatever the machine's speed.
    await host.page.evaluate(() => {
      (window as { sidecarDrawBudgetMs?: number }).sidecarDrawBudgetMs = 0;
      // The entries each script run adds outside the last chunk (a mutation observer's batch).
      const batches: number[] = [];
      (window as { entryBatches?: number[] }).entryBatches = batches;
      new MutationObserver((records) => {
        const last = [...document.querySelectorAll('.entries .chunk')].at(-1);
        const added = records
          .flatMap((r) => [...r.addedNodes])
          .filter((n) => n instanceof Element && n.matches('.entry') && n.closest('.chunk') !== last).length;
        if (added) batches.push(added);
      }).observe(document.querySelector('.entries')!, { childList: true, subtree: true });
    });
    await host.reset(lastPage(false, 1, 200));
    await stopsInPlace(host);
    const batches = await host.page.evaluate(() => (window as { entryBatches?: number[] }).entryBatches!);
    assert.equal(Math.max(...batches), 1, `entries drawn per script run: ${batches.join(' ')}`);
    // Every entry above the last chunk's 25 was drawn on the way up, one at a time.
    assert.ok(batches.length >= 400 - CHUNK, `entries drawn: ${batches.length}`);
    await showsEveryEntry(host, textsOf(1, 200));
  });

  it('shows a chunk that comes back into view with its entries, a block opened still open', async () => {
    const state = lastPage(false, 1, 400);
    reduce(state, {
      kind: 'notification',
      method: 'claude/entry',
      params: {
        channelId: 'ch-1',
        seq: 1,
        entry: { kind: 'tool', id: 'toolu_1', name: 'Bash', status: 'done', input: { command: 'echo first' } },
      },
    });
    // The tool call at the top: in front of the first exchange.
    state.entries.unshift(state.entries.pop()!);
    state.at = new IdMap(state.entries.map((e, i) => [e.id, i]));
    state.shift = 0;
    const host = await openWith(state);
    await scrollTo(host, 0);
    await host.frame();
    const tool = host.page.locator('.entry.tool', { hasText: 'echo first' });
    await tool.locator('.tool-head').click();
    assert.equal(await tool.evaluate((el) => el.classList.contains('expanded')), true);
    // The user goes on in the prompt (the focus leaves the tool) and scrolls to the end.
    await host.page.getByRole('textbox', { name: 'Message to Claude' }).focus();
    await scrollTo(host, 1e7);
    await host.frame();
    assert.equal(await tool.count(), 0, 'far from the view, the chunk holds no entries');
    await scrollTo(host, 0);
    await host.frame();
    assert.equal(await tool.evaluate((el) => el.classList.contains('expanded')), true, 'drawn again, still open');
    assert.equal((await drawn(host))[1], 'Question 1');
  });

  it("draws a sub-agent's entries under its Agent call again when its chunk comes back", async () => {
    const agent: ConversationEntry[] = [
      { kind: 'tool', id: 'toolu_a', name: 'Agent', status: 'done', input: { prompt: 'look around' } },
      { kind: 'prompt', id: 'sub:p', text: 'SUBTASK: look around', parentId: 'toolu_a' },
      { kind: 'tool', id: 'toolu_b', name: 'Bash', status: 'done', input: { command: 'ls' }, parentId: 'toolu_a' },
    ];
    const state = initialState();
    reduce(state, BOUND);
    reduce(state, { kind: 'transcript', entries: [...exchange(1), ...agent, ...exchanges(2, 300)], hasOlder: false });
    const host = await openWith(state);
    const nested = host.page.locator('.entry.tool', { hasText: 'Agent' }).locator('.sub-agent .entry');
    await scrollTo(host, 0);
    await host.frame();
    assert.equal(await nested.count(), 2);
    await scrollTo(host, 1e7);
    await host.frame();
    assert.equal(await nested.count(), 0, 'far from the view, not drawn');
    await scrollTo(host, 0);
    await host.frame();
    assert.equal(await nested.count(), 2, 'drawn again under its call');
    assert.equal(await host.page.locator('.entries .chunk > .entry.user', { hasText: 'SUBTASK' }).count(), 0);
  });

  it("puts a sub-agent's entries read before their Agent call under it once the call's page is read", async () => {
    const state = initialState();
    reduce(state, BOUND);
    const children: ConversationEntry[] = [
      { kind: 'prompt', id: 'sub:p', text: 'SUBTASK: look around', parentId: 'toolu_a' },
      { kind: 'text', id: 'sub:m', text: 'Nothing here.', parentId: 'toolu_a' },
    ];
    reduce(state, { kind: 'transcript', entries: [...children, ...exchanges(41, 60)], hasOlder: true });
    const host = await openWith(state);
    await scrollTo(host, 0);
    const call: ConversationEntry = { kind: 'tool', id: 'toolu_a', name: 'Agent', status: 'done', input: {} };
    await host.events([{ kind: 'olderPage', entries: [...exchange(40), call], beforeId: 'sub:p', hasOlder: false }]);
    await host.frame();
    const agent = host.page.locator('.entry.tool', { hasText: 'Agent' });
    assert.equal(await agent.locator('.sub-agent .entry').count(), 2);
    assert.equal(await host.page.locator('.entries .chunk > .entry.user', { hasText: 'SUBTASK' }).count(), 0);
    // The call after exchange 40 (its text is its sub-agent's prompt), then exchange 41.
    assert.deepEqual((await drawn(host)).slice(0, 4), [
      'Question 40',
      'Answer 40.',
      'SUBTASK: look around',
      'Question 41',
    ]);
  });

  it('streams an answer at the end while the user reads far above, neither moving', async () => {
    const host = await openWith(lastPage(false, 1, 300));
    await scrollTo(host, 0);
    const before = await topOf(host, 'Answer 1.');
    let seq = 0;
    const entry = (e: ConversationEntry): ChatEvent => ({
      kind: 'notification',
      method: 'claude/entry',
      params: { channelId: 'ch-1', seq: ++seq, entry: e },
    });
    const delta = (text: string): ChatEvent => ({
      kind: 'notification',
      method: 'claude/delta',
      params: { channelId: 'ch-1', seq: ++seq, kind: 'text', index: 0, entryId: 'm301:0', text },
    });
    await host.events([
      entry({ kind: 'prompt', id: 'p301', text: 'Question 301' }),
      entry({ kind: 'text', id: 'm301:0', text: 'Answer', streaming: true }),
    ]);
    for (let i = 0; i < 20; i++) await host.events([delta(` part ${i}.\n\nMore`)]);
    await host.events([entry({ kind: 'text', id: 'm301:0', text: 'Answer 301.', streaming: false })]);
    assert.equal(await topOf(host, 'Answer 1.'), before, 'what the user reads stays put');
    await scrollTo(host, 1e7);
    await host.frame();
    assert.deepEqual((await drawn(host)).slice(-2), ['Question 301', 'Answer 301.']);
  });

  it('asks for nothing at the top of a chat that has no older entries', async () => {
    const host = await openWith(lastPage(false));
    await scrollTo(host, 0);
    await scrollTo(host, 5);
    assert.equal(await loadOlderRequests(host), 0);
    assert.equal(await host.page.locator('.older-row').isVisible(), false);
  });
});
