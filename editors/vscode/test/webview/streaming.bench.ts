// Bench: a ~60 KB markdown answer streamed at full speed into the chat page (headless
// Chromium, the scripted host), as issue 25 describes it: ~3,000 text deltas coalesced by
// the daemon into ~45 notifications over ~0.67 s. Measures the
// longest task of the page's thread (PerformanceObserver 'longtask') and the longest gap
// between animation frames while it streams, how late a key would be handled (the
// lateness of a 10 ms timer while it streams), and how long after the answer's last
// notifications (the complete text, claude/turnEnded, the footer) its end is on screen.
//
//   npm run build && node out/test/webview/streaming.bench.cjs [--runs 3] [--profile] [dist-folder ...]
//
// With several dist folders (builds of the page to compare) the runs interleave.

import path from 'node:path';
import type { Browser } from 'playwright-core';
import type { ChatEvent } from '../../src/core/chat-state';
import { initialState, reduce } from '../../src/core/chat-state';
import { launch, PageServer, ScriptedHost } from './scripted-host';

const NOTIFICATIONS = 45;
const STREAM_MS = 670;

/** A long answer with what answers have: headings, paragraphs, lists, code, a table. */
function answer(): string {
  const parts: string[] = [];
  for (let i = 0; parts.join('').length < 60_000; i++) {
    parts.push(
      `## Step ${i + 1}: the ${['parser', 'cache', 'router', 'store'][i % 4]}\n\n`,
      `This part explains **step ${i + 1}** with \`inline code\`, a [link](src/file${i}.ts#L${i + 3}) and some ` +
        'prose that wraps over more than one line in a narrow panel, as answers do.\n\n',
      `- first point of step ${i + 1}\n- second point, a little longer than the first\n- third point\n\n`,
      '```python\n' +
        Array.from(
          { length: 8 },
          (_, j) => `def step_${i}_${j}(value: int) -> int:\n    return value * ${j} + ${i}\n`,
        ).join('') +
        '```\n\n',
      `| name | value |\n|---|---|\n| step | ${i + 1} |\n| size | ${i * 3} |\n\n`,
    );
  }
  return `${parts.join('')}That is the whole answer. THE END.`;
}

/** The notifications of one streamed answer, in order: what the daemon sends the page. */
function stream(text: string): ChatEvent[][] {
  let seq = 10;
  const note = (method: string, params: Record<string, unknown>) =>
    ({ kind: 'notification', method, params: { channelId: 'ch-1', seq: ++seq, ...params } }) as ChatEvent;
  const id = 'msg_bench:0';
  const size = Math.ceil(text.length / NOTIFICATIONS);
  const deltas: ChatEvent[][] = [];
  for (let at = 0; at < text.length; at += size) {
    deltas.push([note('claude/delta', { kind: 'text', index: 0, text: text.slice(at, at + size), entryId: id })]);
  }
  return [
    [
      note('claude/status', { state: 'running', sessionId: 's-1' }),
      note('claude/entry', { entry: { kind: 'prompt', id: 'p-bench', text: 'explain everything' } }),
      note('claude/entry', { entry: { kind: 'text', id, text: '', streaming: true } }),
    ],
    ...deltas,
    [
      note('claude/entry', { entry: { kind: 'text', id, text } }),
      note('claude/turnEnded', {
        outcome: 'success',
        durationMs: 700,
        permissionWaitMs: 0,
        costUsd: 0.2,
        totalCostUsd: 0.2,
        usage: { inputTokens: 1, outputTokens: 1, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 },
      }),
      note('claude/entry', {
        entry: { kind: 'turn', id: 'turn:1', outcome: 'success', durationMs: 700, permissionWaitMs: 0, costUsd: 0.2 },
      }),
      note('claude/status', { state: 'idle', sessionId: 's-1' }),
    ],
  ];
}

interface Figures {
  longestTaskMs: number;
  longestFrameGapMs: number;
  inputDelayMedianMs: number;
  inputDelayMaxMs: number;
  endOnScreenMs: number;
}

interface ProfileNode {
  id: number;
  hitCount?: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

/** The functions the page spent most of its own time in, from a CPU profile. */
function topFunctions(profile: { nodes: ProfileNode[]; samples?: number[]; timeDeltas?: number[] }): string[] {
  const self = new Map<string, number>();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  (profile.samples ?? []).forEach((id, i) => {
    const frame = byId.get(id)?.callFrame;
    if (!frame) return;
    const name = `${frame.functionName || '(anonymous)'} ${path.basename(frame.url)}:${frame.lineNumber + 1}`;
    self.set(name, (self.get(name) ?? 0) + (profile.timeDeltas?.[i] ?? 0) / 1000);
  });
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 15)
    .map(([name, ms]) => `${ms.toFixed(1).padStart(8)} ms  ${name}`);
}

async function run(browser: Browser, server: PageServer, batches: ChatEvent[][], profile = false): Promise<Figures> {
  const host = await ScriptedHost.open(browser, server);
  const state = reduce(initialState(), { kind: 'bound', channelId: 'ch-1', sessionId: 's-1', cwd: '/home/dev/p' });
  await host.reset(state);
  await host.answer('contextUsage', {
    totalTokens: 1,
    maxTokens: 200_000,
    percentage: 0,
    model: 'm',
    categories: [],
    autoCompactThreshold: null,
    autoCompactEnabled: true,
  });
  await host.frame();
  // The user types a prompt before an answer comes: the page is idle for a while.
  await host.page.waitForTimeout(1000);
  const cdp = profile ? await host.page.context().newCDPSession(host.page) : null;
  if (cdp) {
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
    await cdp.send('Profiler.start');
  }
  const streamed = host.page.evaluate(
    async ({ batches, gapMs }) => {
      const tasks: number[] = [];
      new PerformanceObserver((list) => list.getEntries().forEach((e) => tasks.push(e.duration))).observe({
        type: 'longtask',
      });
      // A key pressed now is handled when the thread is free: how late a 10 ms timer runs
      // tells how late a key would echo.
      const lateness: number[] = [];
      let probing = true;
      const probe = (due: number) =>
        setTimeout(() => {
          lateness.push(performance.now() - due);
          if (probing) probe(performance.now() + 10);
        }, 10);
      probe(performance.now() + 10);
      let lastFrame = performance.now();
      let longestGap = 0;
      let watching = true;
      const watch = (now: number) => {
        longestGap = Math.max(longestGap, now - lastFrame);
        lastFrame = now;
        if (watching) requestAnimationFrame(watch);
      };
      requestAnimationFrame(watch);
      const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
      for (const batch of batches.slice(0, -1)) {
        for (const event of batch) window.postMessage({ type: 'event', event }, '*');
        await sleep(gapMs);
      }
      const sentEnd = performance.now();
      for (const event of batches.at(-1)!) window.postMessage({ type: 'event', event }, '*');
      probing = false;
      // On screen: drawn, and the frame after it has started.
      const ended = await new Promise<number>((resolve) => {
        const check = () => {
          const text = document.querySelector('.entry.text:not(.streaming)')?.textContent ?? '';
          if (text.trim().endsWith('THE END.') && document.querySelector('.entry.turn')) {
            requestAnimationFrame(() => resolve(performance.now()));
          } else requestAnimationFrame(check);
        };
        requestAnimationFrame(check);
      });
      await sleep(300);
      watching = false;
      const sorted = [...lateness].sort((a, b) => a - b);
      return {
        longestTaskMs: Math.max(0, ...tasks),
        longestFrameGapMs: longestGap,
        inputDelayMedianMs: sorted[Math.floor(sorted.length / 2)] ?? NaN,
        inputDelayMaxMs: sorted.at(-1) ?? NaN,
        endOnScreenMs: ended - sentEnd,
      };
    },
    { batches, gapMs: STREAM_MS / NOTIFICATIONS },
  );
  const figures = await streamed;
  if (cdp) {
    const { profile: taken } = await cdp.send('Profiler.stop');
    console.log(`\n${server.url}: self time by function\n${topFunctions(taken).join('\n')}`);
  }
  await host.page.close();
  return figures;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const runsAt = args.indexOf('--runs');
  const runs = runsAt >= 0 ? Number(args[runsAt + 1]) : 3;
  const profile = args.includes('--profile');
  const dists = args.filter((a, i) => !a.startsWith('--') && (runsAt < 0 || i !== runsAt + 1));
  const folders = dists.length ? dists.map((d) => path.resolve(d)) : [path.resolve(__dirname, '../../../dist')];
  const text = answer();
  const batches = stream(text);
  console.log(`answer: ${text.length} characters in ${batches.length - 2} delta notifications over ${STREAM_MS} ms`);
  const browser = await launch();
  const servers = folders.map((d) => new PageServer(d));
  for (const s of servers) await s.start();
  const results = folders.map(() => [] as Figures[]);
  try {
    for (let r = 0; r < runs; r++) {
      for (const [i, server] of servers.entries())
        results[i]!.push(await run(browser, server, batches, profile && r === 0));
    }
  } finally {
    await browser.close();
    for (const s of servers) await s.stop();
  }
  const keys: (keyof Figures)[] = [
    'longestTaskMs',
    'longestFrameGapMs',
    'inputDelayMedianMs',
    'inputDelayMaxMs',
    'endOnScreenMs',
  ];
  for (const [i, folder] of folders.entries()) {
    console.log(`\n${folder} (${runs} runs: median [min-max])`);
    for (const key of keys) {
      const values = results[i]!.map((f) => f[key]).sort((a, b) => a - b);
      const median = values[Math.floor(values.length / 2)]!;
      console.log(
        `  ${key.padEnd(18)} ${median.toFixed(1).padStart(7)} [${values[0]!.toFixed(1)}-${values.at(-1)!.toFixed(1)}]`,
      );
    }
  }
}

void main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
