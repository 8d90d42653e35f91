// Bench: a long chat scrolled to its top in the page alone (headless Chromium, scripted host:
// no VS Code around it), the quick loop for the page's share of what
// test/vscode/page-bench.mjs --long measures. The chat opens at its last page (`--open N`: its
// last N entries); the bench scrolls to the top, answers each loadOlder with the page before
// (as the extension does) until the first entry is read, and prints the page's longest task
// while opening and while scrolling, the renderer's CPU time (script, style and layout), the
// JS heap (after a full GC) and the entry elements in the page at the end, and the longest
// V8 major GC pause (and the part of one that is Blink's weak processing, CppGC.AtomicWeak: in
// code-server most of the pause, the workbench's) and animation frame on the page's thread
// (from a trace of the scroll; wall and CPU: on a busy machine the wall time is mostly
// waiting for a core). `--dist DIR`: another
// build's webview.js and webview.css; `--trace FILE`: that trace kept, for DevTools; `--heap
// FILE`: a heap snapshot at the end, for DevTools' Memory tab.
//
//   node esbuild.mjs && node out/test/webview/long-scroll.bench.cjs [--entries 20000] [--page 100] [--open N] [--dist DIR] [--trace FILE] [--heap FILE]

import fs from 'node:fs';
import { initialState, reduce, type ChatState } from '../../src/core/chat-state';
import { writeHeapSnapshot } from '../host/heap-snapshot.mjs';
import type { ConversationEntry } from '../../src/core/transcript';
import { launch, PageServer, ScriptedHost } from './scripted-host';

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(name);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
}

/** Exchange `i`: a prompt, a Bash call and an answer with a code block (4 entries). */
function exchange(i: number): ConversationEntry[] {
  return [
    { kind: 'prompt', id: `p${i}`, text: `Question ${i}: what does step ${i} do?` },
    { kind: 'tool', id: `t${i}`, name: 'Bash', status: 'done', input: { command: `grep -n step_${i} src/*.py` } },
    {
      kind: 'text',
      id: `m${i}`,
      text:
        `Step ${i} parses the **input** and caches it; see \`src/step_${i}.py\`.\n\n` +
        '```python\n' +
        `def step_${i}(value: int) -> int:\n    return value * ${i}\n` +
        '```\n\nIt runs once per request.',
    },
    { kind: 'turn', id: `turn:p${i}`, outcome: 'success', durationMs: 1200, costUsd: 0.01, permissionWaitMs: 0 },
  ] as ConversationEntry[];
}

const exchanges = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, k) => exchange(from + k)).flat();

interface TraceEvent {
  name: string;
  ph: string;
  pid: number;
  tid: number;
  dur?: number;
  /** Thread (CPU) time: on a busy machine `dur` is mostly waiting for a core. */
  tdur?: number;
  args?: { name?: string };
}

/** The longest of the events named `names` on the page's main thread, in ms (wall, or `cpu`: thread time). */
function longestOnMainThread(trace: string, names: string[], cpu = false): number {
  const parsed = JSON.parse(trace) as { traceEvents: TraceEvent[] } | TraceEvent[];
  const events = Array.isArray(parsed) ? parsed : parsed.traceEvents;
  const main = events.find((e) => e.name === 'thread_name' && e.args?.name === 'CrRendererMain');
  if (!main) return 0;
  const durations = events
    .filter((e) => e.ph === 'X' && names.includes(e.name) && e.pid === main.pid && e.tid === main.tid)
    .map((e) => ((cpu ? e.tdur : e.dur) ?? 0) / 1000);
  return Math.round(Math.max(0, ...durations) * 10) / 10;
}

async function main(): Promise<void> {
  const total = Math.ceil(option('--entries', 20_000) / 4);
  const perPage = Math.max(1, Math.floor(option('--page', 100) / 4));
  const dist = process.argv.indexOf('--dist');
  const server = dist >= 0 ? new PageServer(process.argv[dist + 1]) : new PageServer();
  await server.start();
  const browser = await launch();
  try {
    const host = await ScriptedHost.open(browser, server);
    const state: ChatState = initialState();
    reduce(state, { kind: 'bound', channelId: 'ch-1', sessionId: 's-1', cwd: '/home/dev/project' });
    // --open N: the chat opens with its last N entries (read at once), the scroll reads the rest.
    const opened = Math.max(perPage, Math.ceil(option('--open', 0) / 4));
    reduce(state, { kind: 'transcript', entries: exchanges(total - opened + 1, total), hasOlder: true });
    await host.page.evaluate(() => {
      const w = window as unknown as { __tasks: number[] };
      w.__tasks = [];
      new PerformanceObserver((list) => list.getEntries().forEach((e) => w.__tasks.push(e.duration))).observe({
        type: 'longtask',
      });
    });
    await host.reset(state);
    await host.frame();
    const opening = await host.page.evaluate(() => (window as unknown as { __tasks: number[] }).__tasks.splice(0));
    const cdp = await host.page.context().newCDPSession(host.page);
    await cdp.send('Performance.enable', { timeDomain: 'threadTicks' });
    const metrics = async () =>
      Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]));
    const traceTo = process.argv.indexOf('--trace');
    // cppgc: Blink's heap (the DOM), whose weak processing is part of each major GC's pause.
    await browser.startTracing(host.page, {
      categories: ['devtools.timeline', 'v8', 'disabled-by-default-v8.gc', 'cppgc', 'disabled-by-default-cppgc'],
    });
    const before = await metrics();
    const started = Date.now();
    const longest: number[] = [];
    for (let to = total - opened; to >= 1; to -= perPage) {
      const from = Math.max(1, to - perPage + 1);
      await host.page.locator('.transcript').evaluate((el) => {
        el.scrollTop = 0;
        el.dispatchEvent(new Event('scroll'));
      });
      await host.request('loadOlder');
      await host.events([{ kind: 'olderLoading' }]);
      await host.events([
        { kind: 'olderPage', entries: exchanges(from, to), beforeId: `p${to + 1}`, hasOlder: from > 1 },
      ]);
      await host.answer('loadOlder', { loaded: (to - from + 1) * 4, hasMore: from > 1 });
      await host.frame();
      if (((total - to) / perPage) % 50 === 0) {
        const tasks = await host.page.evaluate(() => (window as unknown as { __tasks: number[] }).__tasks.splice(0));
        longest.push(Math.round(Math.max(0, ...tasks)));
        console.error(`${(total - to) * 4} entries read: longest task of the last 50 pages ${longest.at(-1)} ms`);
      }
    }
    const after = await metrics();
    const trace = (await browser.stopTracing()).toString();
    if (traceTo >= 0) fs.writeFileSync(process.argv[traceTo + 1]!, trace);
    await cdp.send('HeapProfiler.collectGarbage');
    const collected = await metrics();
    const heapTo = process.argv.indexOf('--heap');
    if (heapTo >= 0) await writeHeapSnapshot(cdp, process.argv[heapTo + 1]!);
    const tasks = await host.page.evaluate(() => (window as unknown as { __tasks: number[] }).__tasks);
    const ms = (name: string) => Math.round(((after[name] ?? 0) - (before[name] ?? 0)) * 1000);
    console.log(
      JSON.stringify({
        entries: total * 4,
        scrollMs: Date.now() - started,
        longestTaskOpeningMs: Math.round(Math.max(0, ...opening)),
        longestTaskMs: Math.round(Math.max(0, ...tasks, ...longest)),
        taskCpuMs: ms('TaskDuration'),
        scriptMs: ms('ScriptDuration'),
        styleLayoutMs: ms('RecalcStyleDuration') + ms('LayoutDuration'),
        heapMB: Math.round((after.JSHeapUsedSize ?? 0) / 1e6),
        heapAfterGcMB: Math.round((collected.JSHeapUsedSize ?? 0) / 1e6),
        longestMajorGcMs: longestOnMainThread(trace, ['V8.GC_MARK_COMPACTOR']),
        longestMajorGcCpuMs: longestOnMainThread(trace, ['V8.GC_MARK_COMPACTOR'], true),
        longestFrameCpuMs: longestOnMainThread(trace, ['FireAnimationFrame'], true),
        // The part of a major GC's pause that is Blink's weak processing (the DOM's).
        longestCppgcWeakCpuMs: longestOnMainThread(trace, ['CppGC.AtomicWeak'], true),
        longestGcStepMs: longestOnMainThread(trace, ['V8.GCIncrementalMarking', 'V8.GCScavenger', 'MinorGC']),
        entryElements: await host.page.locator('.entry').count(),
        entriesAskedAgain: host.entriesAsked,
        errors: host.errors,
      }),
    );
  } finally {
    await browser.close();
    await server.stop();
  }
}

void main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
