// An answer that streams is drawn in pieces (src/webview/markdown.ts: finished blocks once,
// the unfinished tail again each frame; more than a frame should take, a slice a frame): in
// headless Chromium, the answer streamed in chunks of random sizes, each chunk drawn before
// the next comes, or a long answer given at once, ends as the same DOM as the whole answer
// rendered at once by markdown-it.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { initialState, reduce, type ChatEvent, type ChatState } from '../../src/core/chat-state';
import { renderMarkdown, SLICE_CHARS } from '../../src/webview/markdown';
import { chatPages } from './chat-pages';
import type { ScriptedHost } from './scripted-host';

const openPage = chatPages();

/** Markdown with every kind of block that can continue across a blank line, or not. */
const ANSWER = [
  '# Plan\n\nFirst a paragraph with **bold**, `code` and a [link](src/a.ts#L3),\nwrapped over two lines.\n\n',
  '## Steps\n\n1. parse the input\n2. check it\n\n10. a tenth step\n\n',
  '- a loose list\n\n- its second item\n\n  a paragraph of the second item\n\n- third\n  - nested\n\n',
  '```python\ndef f(x: int) -> int:\n\n    return x * 2\n```\n\n',
  '~~~\nplain fence with ``` inside\n~~~\n\n',
  'Text before indented code:\n\n    indented code\n\n    more of it\n\nText after.\n\n',
  '| name | value |\n|---|---|\n| a | 1 |\n| b | 2 |\n\n',
  '> a quote\n> on two lines\n\n> another quote\n\n',
  '***\n\nSetext heading\n---\n\nThe end, without a final newline.',
].join('');

/** A generator of the same random numbers each run (mulberry32): a failure can be rerun. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let seq = 0;
const note = (method: string, params: Record<string, unknown>) =>
  ({ kind: 'notification', method, params: { channelId: 'ch-1', seq: ++seq, ...params } }) as ChatEvent;
const textEntry = (text: string, streaming: boolean) =>
  note('claude/entry', { entry: { kind: 'text', id: 'm1:0', text, ...(streaming ? { streaming } : {}) } });
const delta = (text: string) => note('claude/delta', { kind: 'text', index: 0, text, entryId: 'm1:0' });

/** The chat with the user's question, before the answer. */
function asked(): ChatState {
  const state = initialState();
  reduce(state, note('claude/entry', { entry: { kind: 'prompt', id: 'u1', text: 'Explain it' } }));
  return state;
}

/** The whole text rendered at once, as the page's DOM writes it out. */
async function wholeHtml(host: ScriptedHost, text: string): Promise<string> {
  return host.page.evaluate((html) => {
    const parsed = document.createElement('div');
    parsed.innerHTML = html;
    return parsed.innerHTML;
  }, renderMarkdown(text));
}

/** The answer's markdown as the page shows it: the blocks of its finished pieces, then the tail's. */
async function answerHtml(host: ScriptedHost): Promise<string> {
  return host.page.evaluate(() => {
    const markdown = document.querySelector('.entry.text .markdown')!;
    const [finished, tail] = [...markdown.children];
    return [...(finished?.children ?? [])].map((piece) => piece.innerHTML).join('') + (tail?.innerHTML ?? '');
  });
}

/**
 * Notes how much of the answer's text the page shows at each of its frames from now on; the
 * returned function gives the most that one frame added (two looks of the test's may be more
 * than a frame apart: under load, the page draws a slice in each).
 */
async function framesDrawing(host: ScriptedHost): Promise<() => Promise<number>> {
  await host.page.evaluate(() => {
    const lengths: number[] = [];
    (window as unknown as { __lengths: number[] }).__lengths = lengths;
    const look = () => {
      lengths.push(document.querySelector('.entry.text .markdown')?.textContent.length ?? 0);
      requestAnimationFrame(look);
    };
    requestAnimationFrame(look);
  });
  return async () => {
    const lengths = await host.page.evaluate(() => (window as unknown as { __lengths: number[] }).__lengths);
    return Math.max(0, ...lengths.slice(1).map((length, i) => length - lengths[i]!));
  };
}

describe('an answer drawn as it streams', () => {
  it('shows at every step what the text so far renders to (its last text grown in place where it can)', async () => {
    const streamed = await openPage();
    await streamed.reset(asked());
    await streamed.events([textEntry('', true)]);
    const next = random(4);
    // How often the tail's first element was the one seen after the step before (its text grown
    // in place, no element made again).
    let grown = 0;
    for (let at = 0; at < ANSWER.length;) {
      const size = 1 + Math.floor(next() * 12);
      at += size;
      await streamed.events([delta(ANSWER.slice(at - size, at))]);
      const text = ANSWER.slice(0, at);
      assert.equal(await answerHtml(streamed), await wholeHtml(streamed, text), `after ${at} characters`);
      grown += await streamed.page.evaluate(() => {
        const seen = ((window as unknown as { __seen?: WeakSet<Element> }).__seen ??= new WeakSet());
        const first = document.querySelector('.md-tail > *');
        const kept = first !== null && seen.has(first);
        if (first) seen.add(first);
        return kept ? 1 : 0;
      });
    }
    assert.ok(grown > 20, `the tail's elements were kept as its text grew (${grown} times)`);
    assert.deepEqual(streamed.errors, []);
    await streamed.page.close();
  });

  it('writes no attribute of the page around the answer again with the value it had, frame after frame', async () => {
    // The same value written again still restyles its element: a style recalculation of its
    // own in each frame of a stream (the status line, the empty row, the permission dock).
    const streamed = await openPage();
    await streamed.reset(asked());
    await streamed.events([textEntry('', true)]);
    await streamed.page.evaluate(() => {
      const again: string[] = [];
      (window as unknown as { __again: string[] }).__again = again;
      new MutationObserver((records) => {
        for (const record of records) {
          const el = record.target as Element;
          if (el.closest('.entry.text') || el.getAttribute(record.attributeName!) !== record.oldValue) continue;
          again.push(`${el.tagName.toLowerCase()}.${el.className} ${record.attributeName}`);
        }
      }).observe(document.body, { attributes: true, attributeOldValue: true, subtree: true });
    });
    for (let at = 0; at < ANSWER.length; at += 40) await streamed.events([delta(ANSWER.slice(at, at + 40))]);
    const again = await streamed.page.evaluate(() => (window as unknown as { __again: string[] }).__again);
    assert.deepEqual([...new Set(again)], []);
    await streamed.page.close();
  });

  for (const seed of [1, 2, 3]) {
    it(`ends as the same DOM as the whole answer drawn at once (chunks of random sizes, seed ${seed})`, async () => {
      const streamed = await openPage();
      await streamed.reset(asked());
      await streamed.events([textEntry('', true)]);
      const next = random(seed);
      let drawn = 0;
      let frozen = 0;
      for (let at = 0; at < ANSWER.length;) {
        // 1 to 40 characters: cuts inside words, markers and fences as well as at blank lines.
        const size = 1 + Math.floor(next() * 40);
        await streamed.events([delta(ANSWER.slice(at, at + size))]);
        at += size;
        drawn++;
        frozen = await streamed.page.locator('.md-chunk').count();
      }
      assert.ok(drawn > ANSWER.length / 40, 'the answer came in many chunks, each drawn');
      assert.ok(frozen > 5, 'finished blocks were set aside as it streamed');
      await streamed.events([textEntry(ANSWER, false)]);
      assert.equal(await answerHtml(streamed), await wholeHtml(streamed, ANSWER));
      assert.equal(await streamed.page.locator('.md-tail.cursor').count(), 0, 'no cursor once it ended');
      assert.deepEqual(streamed.errors, []);
      await streamed.page.close();
    });
  }

  it('draws a long answer that comes at once a slice a frame, ending as the whole answer', async () => {
    const long = Array.from({ length: 60 }, (_, i) => ANSWER.replace('# Plan', `# Part ${i + 1}`)).join('\n\n');
    assert.ok(long.length > 4 * SLICE_CHARS);
    const host = await openPage();
    const state = asked();
    reduce(state, textEntry(long, false));
    await host.reset(state);
    const expected = await wholeHtml(host, long);
    let frames = 0;
    while ((await answerHtml(host)) !== expected && frames < 100) {
      await host.frame();
      frames++;
    }
    assert.equal(await answerHtml(host), expected);
    // Drawn in pieces of at most a slice each (one a frame), not in one go.
    const pieces = await host.page.$$eval('.entry.text .md-chunk', (chunks) => chunks.map((c) => c.textContent.length));
    assert.ok(pieces.length >= Math.floor(long.length / SLICE_CHARS), `${pieces.length} pieces`);
    assert.ok(Math.max(...pieces) <= SLICE_CHARS, `pieces of ${Math.max(...pieces)} characters at most`);
    assert.deepEqual(host.errors, []);
    await host.page.close();
  });

  it('draws a large batch of a stream in slices without ever showing less than before', async () => {
    const long = Array.from({ length: 30 }, (_, i) => ANSWER.replace('# Plan', `# Part ${i + 1}`)).join('\n\n');
    const host = await openPage();
    await host.reset(asked());
    const start = 'Intro paragraph.\n\nA paragraph still being writ';
    await host.events([textEntry('', true), delta(start)]);
    const shown = () => host.page.evaluate(() => document.querySelector('.entry.text .markdown')!.textContent);
    let before = await shown();
    assert.match(before, /still being writ/);
    // The page fell behind: the rest comes as one batch, the paragraph it was in the middle
    // of longer than a slice (the first slice ends before it), then the rest of the answer.
    const rest = `ten,\n${'and it goes on\n'.repeat(Math.ceil(SLICE_CHARS / 15))}\n${long}`;
    await host.events([delta(rest)]);
    for (let frames = 0; !before.includes('without a final newline') && frames < 100; frames++) {
      const now = await shown();
      assert.ok(now.includes('A paragraph still being writ'), `frame ${frames}: the paragraph being written went away`);
      assert.ok(now.length >= before.length, `the answer shrank from ${before.length} to ${now.length} characters`);
      before = now;
      await host.frame();
    }
    await host.events([textEntry(start + rest, false)]);
    assert.equal(await answerHtml(host), await wholeHtml(host, start + rest));
    assert.deepEqual(host.errors, []);
    await host.page.close();
  });

  it('draws the end of a streaming answer first when more than a slice comes at once, the part before it a slice a frame', async () => {
    const long = Array.from({ length: 60 }, (_, i) => ANSWER.replace('# Plan', `# Part ${i + 1}`)).join('\n\n');
    const host = await openPage();
    await host.reset(asked());
    const start = 'Intro paragraph.\n\n';
    await host.events([textEntry('', true), delta(start)]);
    const mostInAFrame = await framesDrawing(host);
    // The page fell behind: the rest of the answer so far comes as one batch.
    await host.events([delta(long)]);
    const parts = () => host.page.$$eval('.entry.text .markdown h1', (headings) => headings.map((h) => h.textContent));
    const length = () => host.page.evaluate(() => document.querySelector('.entry.text .markdown')!.textContent.length);
    assert.ok((await parts()).includes('Part 60'), 'the newest part is on screen in the first frame');
    let shown = await length();
    for (let frames = 0; (await host.page.locator('.md-gap').count()) > 0 && frames < 100; frames++) {
      await host.frame();
      assert.deepEqual(
        (await parts()).filter((p) => p === 'Part 60'),
        ['Part 60'],
        'the end stays, drawn once',
      );
      const now = await length();
      assert.ok(now >= shown, `the answer shrank from ${shown} to ${now} characters`);
      shown = now;
    }
    assert.equal(await host.page.locator('.md-gap').count(), 0, 'the part before the end was drawn');
    const most = await mostInAFrame();
    assert.ok(most <= SLICE_CHARS, `a frame drew ${most} characters`);
    await host.events([textEntry(start + long, false)]);
    assert.equal(await answerHtml(host), await wholeHtml(host, start + long));
    assert.deepEqual(host.errors, []);
    await host.page.close();
  });

  it("draws a turn's end that comes with a backlog in the next frame, once, and the backlog above it in slices", async () => {
    const long = Array.from({ length: 30 }, (_, i) => ANSWER.replace('# Plan', `# Part ${i + 1}`)).join('\n\n');
    const host = await openPage();
    await host.reset(asked());
    const start = 'Intro paragraph.\n\nA paragraph still being writ';
    await host.events([textEntry('', true), delta(start)]);
    const text = () => host.page.evaluate(() => document.querySelector('.entry.text .markdown')!.textContent);
    const mostInAFrame = await framesDrawing(host);
    // The page fell behind: the rest of the answer and the turn's end come as one batch.
    const rest = `ten.\n\n${long}`;
    await host.events([delta(rest), textEntry(start + rest, false)]);
    let before = await text();
    const ends = (shown: string) => shown.split('Part 30').length - 1;
    assert.equal(ends(before), 1, 'the end is drawn in the first frame after the turn ended');
    assert.match(before, /still being writ/, 'what was on screen stays');
    const expected = await wholeHtml(host, start + rest);
    for (let frames = 0; (await answerHtml(host)) !== expected && frames < 100; frames++) {
      await host.frame();
      const now = await text();
      assert.equal(ends(now), 1, `frame ${frames}: the end drawn once`);
      assert.ok(now.length >= before.length, `the answer shrank from ${before.length} to ${now.length} characters`);
      before = now;
    }
    assert.equal(await answerHtml(host), expected);
    const most = await mostInAFrame();
    assert.ok(most <= SLICE_CHARS, `a frame drew ${most} characters`);
    assert.equal(await host.page.locator('.md-tail.cursor').count(), 0, 'no cursor once it ended');
    assert.deepEqual(host.errors, []);
    await host.page.close();
  });

  it("restyles the answer's tail when it ends, not the whole answer", async () => {
    const long = Array.from({ length: 20 }, (_, i) => ANSWER.replace('# Plan', `# Part ${i + 1}`)).join('\n\n');
    const host = await openPage();
    await host.reset(asked());
    await host.events([textEntry('', true), delta(long)]);
    for (let frames = 0; (await host.page.locator('.md-gap').count()) > 0 && frames < 100; frames++) {
      await host.frame();
    }
    const elements = await host.page.locator('.entry.text *').count();
    // The browser's own count of the elements each style recalculation visited (its trace).
    const browser = host.page.context().browser()!;
    await browser.startTracing(host.page, { categories: ['devtools.timeline'] });
    await host.events([textEntry(long, false)]);
    const trace = JSON.parse((await browser.stopTracing()).toString()) as {
      traceEvents: { name: string; args?: { elementCount?: number } }[];
    };
    const restyled = trace.traceEvents
      .filter((e) => e.name === 'UpdateLayoutTree')
      .map((e) => e.args?.elementCount ?? 0);
    assert.ok(restyled.length > 0, 'the end was drawn while the trace ran');
    assert.ok(
      Math.max(...restyled) < elements / 10,
      `a style recalculation visited ${Math.max(...restyled)} elements of the answer's ${elements}`,
    );
    assert.equal(await host.page.locator('.entry.text.streaming').count(), 0, 'the entry no longer streams');
    assert.deepEqual(host.errors, []);
    await host.page.close();
  });

  it('shows the cursor after the tail while it streams, and only there', async () => {
    const host = await openPage();
    await host.reset(asked());
    await host.events([textEntry('', true), delta('Done.\n\nStill writing\n')]);
    const tail = host.page.locator('.entry.text .md-tail.cursor');
    assert.equal(await tail.count(), 1);
    assert.equal((await tail.textContent())?.trim(), 'Still writing', 'the finished paragraph is not in the tail');
    await host.page.close();
  });
});
