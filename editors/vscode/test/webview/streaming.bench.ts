// Bench: a ~60 KB markdown answer streamed at full speed into the chat page (headless
// Chromium, the scripted host), as issue 25 describes it: ~3,000 text deltas coalesced by
// the daemon into ~45 notifications over ~0.67 s, while the user types into the prompt.
// Measured in the page, per run:
//
// - the longest task of the page's thread (PerformanceObserver 'longtask': 50 ms or more,
//   else 0), the longest stall (how late a 10 ms timer fires: the thread was busy that
//   long) and the longest gap between animation frames while it streams;
// - key echo: a key is typed into the prompt every 25 ms while it streams (CDP key events,
//   as a user's); its echo is from the key event's time stamp to the end of the frame
//   that draws it (a task posted from the next animation frame runs after that frame's
//   layout and paint). Median and max over the keys typed before claude/turnEnded;
// - end on screen: from posting the answer's last notifications (the complete text,
//   claude/turnEnded, the footer) to the first frame after its end is drawn;
// - the CPU time of the page's thread from the first notification to the end on screen, and
//   the part of it in style and layout (Performance.getMetrics in thread time): the work
//   itself, which a busy machine does not inflate as it does the times above.
//
// With `--daemon` the answer comes from the real daemon and CLI instead (issue 43): the
// stand-in model streams it at full speed in 20-character deltas, the daemon coalesces them
// as the extension asks (coalesceDeltasMs 16), the extension's own client (src/core) applies
// them and its feed (src/extension/page-feed.ts) posts them to the page, as the panel does.
// The daemon runs behind timestamp-relay.mjs, which notes when claude/turnEnded left it: end
// on screen is timed from there (and also when turnEnded reached the client and the page).
//
// The peer (`--peer`), in the same browser and on the same page: the cheapest renderer of
// the same stream, each delta appended as a plain text node to one element (its messages
// have a type of their own, which the page's handler ignores): the practical limit of
// drawing a stream there.
//
//   npm run build && node out/test/webview/streaming.bench.cjs [--runs 3] [--chars 60000]
//       [--daemon] [--peer] [--json] [--profile] [dist-folder ...]
//
// With several dist folders (builds of the page to compare) the runs interleave; `--json`
// prints the figures of every run as one JSON object (bench/editor_vscode.py reads it).

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, CDPSession, Page } from 'playwright-core';
import type { ChatEvent } from '../../src/core/chat-state';
import { initialState, reduce } from '../../src/core/chat-state';
import { PageFeed } from '../../src/extension/page-feed';
import { toMessage } from '../../src/core/transcript';
import type { HostMessage } from '../../src/shared/webview-messages';
import { client, sandbox, sidecarBin, startModel, type Model } from '../core/harness';
import { INFO, launch, PageServer, ScriptedHost } from './scripted-host';

/** The answer of issue 25: 60,000 characters in 45 notifications over 670 ms. */
const FULL_CHARS = 60_000;
const FULL_NOTIFICATIONS = 45;
const FULL_STREAM_MS = 670;
const KEY_EVERY_MS = 25;
const END = 'That is the whole answer. THE END.';

/** A long answer with what answers have: headings, paragraphs, lists, code, a table. */
function answer(chars: number): string {
  const parts: string[] = [];
  for (let i = 0; parts.join('').length < chars; i++) {
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
  return `${parts.join('')}${END}`;
}

/** The notifications of one streamed answer, in order: what the daemon sends the page. */
function stream(text: string, notifications: number): ChatEvent[][] {
  let seq = 10;
  const note = (method: string, params: Record<string, unknown>) =>
    ({ kind: 'notification', method, params: { channelId: 'ch-1', seq: ++seq, ...params } }) as ChatEvent;
  const id = 'msg_bench:0';
  const size = Math.ceil(text.length / notifications);
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
  longestStallMs: number;
  longestFrameGapMs: number;
  keyEchoMedianMs: number | null;
  keyEchoMaxMs: number | null;
  keys: number;
  endOnScreenMs: number;
  /** `--daemon`: from the daemon's send of claude/turnEnded to the page's receiving it. */
  endArrivedMs?: number;
  /** `--daemon`: from the daemon's send of claude/turnEnded to the host's (the client's) having applied it. */
  hostArrivedMs?: number;
  /** `--daemon`: the notifications (and joined events) the page got, and the messages they came in. */
  events?: number;
  messages?: number;
  /** CPU time of the page's thread from the first notification to the end on screen. */
  threadCpuMs: number;
  /** The part of it spent in style and layout. */
  layoutCpuMs: number;
}

const FIGURES: (keyof Figures)[] = [
  'longestTaskMs',
  'longestStallMs',
  'longestFrameGapMs',
  'keyEchoMedianMs',
  'keyEchoMaxMs',
  'keys',
  'endOnScreenMs',
  'endArrivedMs',
  'hostArrivedMs',
  'events',
  'messages',
  'threadCpuMs',
  'layoutCpuMs',
];

/** The page thread's CPU time so far (Performance.getMetrics in thread time), in ms. */
async function cpuTimes(cdp: CDPSession): Promise<{ task: number; layout: number }> {
  const { metrics } = await cdp.send('Performance.getMetrics');
  const metric = (name: string) => (metrics.find((m) => m.name === name)?.value ?? 0) * 1000;
  return { task: metric('TaskDuration'), layout: metric('LayoutDuration') + metric('RecalcStyleDuration') };
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

/** Starts the page's probes (tasks, timer lateness, frames, key echo); with `peer`, puts the
 * cheapest renderer in front of the page's own: every event stops at it. */
async function instrument(page: Page, peer: boolean): Promise<void> {
  await page.evaluate((peer) => {
    const bench = {
      tasks: [] as number[],
      late: [] as number[],
      echoes: [] as [number, number][],
      longestGap: 0,
      running: true,
      lastKeyAt: NaN,
    };
    (window as unknown as { __bench: typeof bench }).__bench = bench;
    new PerformanceObserver((list) => list.getEntries().forEach((e) => bench.tasks.push(e.duration))).observe({
      type: 'longtask',
    });
    const probe = (due: number) =>
      setTimeout(() => {
        bench.late.push(performance.now() - due);
        if (bench.running) probe(performance.now() + 10);
      }, 10);
    probe(performance.now() + 10);
    let lastFrame = performance.now();
    const watch = (now: number) => {
      bench.longestGap = Math.max(bench.longestGap, now - lastFrame);
      lastFrame = now;
      if (bench.running) requestAnimationFrame(watch);
    };
    requestAnimationFrame(watch);
    // A key's time stamp is when the browser made the event, before it waited for the thread.
    window.addEventListener('keydown', (e) => (bench.lastKeyAt = e.timeStamp), true);
    document.querySelector('textarea.prompt')!.addEventListener('input', () => {
      const typedAt = bench.lastKeyAt;
      requestAnimationFrame(() => {
        const after = new MessageChannel();
        after.port1.onmessage = () => bench.echoes.push([typedAt, performance.now() - typedAt]);
        after.port2.postMessage(null);
      });
    });
    // `--daemon`: what came, and when claude/turnEnded came (before the page's handler runs)
    // and its end was drawn (the frame after the one that drew it has started).
    Object.assign(bench, { messages: 0, events: 0, endAt: NaN, drawnAt: NaN });
    window.addEventListener(
      'message',
      (message: MessageEvent<{ type?: string; event?: ChatEvent; events?: { event: ChatEvent }[] }>) => {
        const data = message.data;
        const events =
          data.type === 'events' ? (data.events ?? []).map((e) => e.event) : data.event ? [data.event] : [];
        if (!events.length) return;
        const seen = bench as typeof bench & { messages: number; events: number; endAt: number; drawnAt: number };
        seen.messages++;
        seen.events += events.length;
        const ended = events.some((e) => e.kind === 'notification' && e.method === 'claude/turnEnded');
        if (!ended || !Number.isNaN(seen.endAt)) return;
        seen.endAt = performance.now();
        void (window as unknown as { __benchEnded?(): Promise<void> }).__benchEnded?.();
        const check = () => {
          const text = document.querySelector('.entry.text:not(.streaming)')?.textContent ?? '';
          if (text.trim().endsWith('THE END.') && document.querySelector('.entry.turn')) {
            requestAnimationFrame(() => (seen.drawnAt = performance.now()));
          } else requestAnimationFrame(check);
        };
        requestAnimationFrame(check);
      },
      true,
    );
    if (!peer) return;
    const transcript = document.querySelector<HTMLElement>('.transcript')!;
    const list = transcript.querySelector('.entries')!;
    transcript.querySelector<HTMLElement>('.empty')!.hidden = true;
    let answer: HTMLElement | null = null;
    let scroll = 0;
    const div = (className: string, text: string) => {
      const el = document.createElement('div');
      el.className = className;
      el.style.whiteSpace = 'pre-wrap';
      el.append(text);
      list.append(el);
      return el;
    };
    window.addEventListener('message', (message: MessageEvent<{ type?: string; event?: ChatEvent }>) => {
      const event = message.data.event;
      if (message.data.type !== 'bench-peer' || event?.kind !== 'notification') return;
      if (event.method === 'claude/delta') answer?.append(event.params.text);
      else if (event.method === 'claude/entry') {
        const entry = event.params.entry;
        if (entry.kind === 'prompt') div('entry user', entry.text);
        else if (entry.kind === 'text') answer ??= div('entry text', entry.text);
        else if (entry.kind === 'turn') div('entry turn', 'Done');
      }
      // Follows the end, once a frame.
      scroll ||= requestAnimationFrame(() => {
        scroll = 0;
        transcript.scrollTop = transcript.scrollHeight;
      });
    });
  }, peer);
}

async function run(
  browser: Browser,
  server: PageServer,
  batches: ChatEvent[][],
  streamMs: number,
  peer: boolean,
  profile: boolean,
): Promise<Figures> {
  const host = await ScriptedHost.open(browser, server);
  const state = reduce(initialState(), { kind: 'bound', channelId: 'ch-1', sessionId: 's-1', cwd: '/home/dev/p' });
  await host.reset(state);
  await host.page.focus('textarea.prompt');
  await host.frame();
  // The user types a prompt before an answer comes: the page is idle for a while.
  await host.page.waitForTimeout(1000);
  await instrument(host.page, peer);
  const metrics = await host.page.context().newCDPSession(host.page);
  // Durations in the page thread's CPU time, not the wall clock's: the same on a busy machine.
  await metrics.send('Performance.enable', { timeDomain: 'threadTicks' });
  const cdp = profile ? await host.page.context().newCDPSession(host.page) : null;
  if (cdp) {
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
    await cdp.send('Profiler.start');
  }
  const cpuBefore = await cpuTimes(metrics);
  const typing = { on: true };
  await host.page.exposeFunction('__benchEnded', () => (typing.on = false));
  // What the extension's feed posts (src/extension/page-feed.ts): a batch's events in one
  // `events` message, each with the host's rev after it; the peer's messages have a type of
  // their own, one per event, which the page ignores.
  const posts = peer
    ? batches.map((batch) => batch.map((event) => ({ type: 'bench-peer', event })))
    : batches.map((batch): HostMessage[] => [
        { type: 'events', events: batch.map((event) => ({ event, rev: reduce(state, event).rev })) },
      ]);
  const streamed = host.page.evaluate(
    async ({ posts, gapMs }) => {
      const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
      for (const batch of posts.slice(0, -1)) {
        for (const message of batch) window.postMessage(message, '*');
        await sleep(gapMs);
      }
      const sentEnd = performance.now();
      for (const message of posts.at(-1)!) window.postMessage(message, '*');
      void (window as unknown as { __benchEnded(): Promise<void> }).__benchEnded();
      // On screen: drawn, and the frame after it has started.
      const drawn = await new Promise<number>((resolve) => {
        const check = () => {
          const text = document.querySelector('.entry.text:not(.streaming)')?.textContent ?? '';
          if (text.trim().endsWith('THE END.') && document.querySelector('.entry.turn')) {
            requestAnimationFrame(() => resolve(performance.now()));
          } else requestAnimationFrame(check);
        };
        requestAnimationFrame(check);
      });
      return { sentEnd, drawn };
    },
    { posts, gapMs: streamMs / (batches.length - 2) },
  );
  // The user goes on typing while it streams, a key every 25 ms (each waits for the page to take it).
  for (let i = 0; typing.on; i++) {
    await host.page.keyboard.press('abcdefghij'[i % 10]!);
    await host.page.waitForTimeout(KEY_EVERY_MS);
  }
  const { sentEnd, drawn } = await streamed;
  const cpuAfter = await cpuTimes(metrics);
  await host.page.waitForTimeout(300);
  const figures = await host.page.evaluate(
    ({ sentEnd, drawn }) => {
      const bench = (
        window as unknown as {
          __bench: {
            tasks: number[];
            late: number[];
            echoes: [number, number][];
            longestGap: number;
            running: boolean;
          };
        }
      ).__bench;
      bench.running = false;
      const echoes = bench.echoes
        .filter(([typedAt]) => typedAt < sentEnd)
        .map(([, echo]) => echo)
        .sort((a, b) => a - b);
      return {
        longestTaskMs: Math.max(0, ...bench.tasks),
        longestStallMs: Math.max(0, ...bench.late),
        longestFrameGapMs: bench.longestGap,
        keyEchoMedianMs: echoes.length ? echoes[Math.floor(echoes.length / 2)]! : null,
        keyEchoMaxMs: echoes.at(-1) ?? null,
        keys: echoes.length,
        endOnScreenMs: drawn - sentEnd,
      };
    },
    { sentEnd, drawn },
  );
  const cpu = { threadCpuMs: cpuAfter.task - cpuBefore.task, layoutCpuMs: cpuAfter.layout - cpuBefore.layout };
  if (cdp) {
    const { profile: taken } = await cdp.send('Profiler.stop');
    console.error(
      `\n${server.url} (${peer ? 'peer' : 'page'}): self time by function\n${topFunctions(taken).join('\n')}`,
    );
  }
  await host.page.close();
  return { ...figures, ...cpu };
}

/**
 * `--daemon`: one answer from the real daemon and CLI (the stand-in model streaming `text` at
 * full speed in 20-character deltas), through the extension's own client (src/core) and its
 * feed to the page (src/extension/page-feed.ts); the peer gets every event as it comes. The
 * daemon runs behind timestamp-relay.mjs, which notes when claude/turnEnded left it: the end
 * is timed from there, as the user sees it, not from the page's receiving it.
 */
async function runDaemon(
  browser: Browser,
  server: PageServer,
  model: Model,
  peer: boolean,
  profile: boolean,
): Promise<Figures> {
  const box = sandbox(model);
  const sentLog = path.join(box.root, 'turn-ended.log');
  const relay = path.resolve(__dirname, '../../../test/webview/timestamp-relay.mjs');
  const sidecar = client(box, {
    command: [process.execPath, relay, sentLog, sidecarBin(), '--stdio'],
    initializationOptions: { coalesceDeltasMs: 16 },
  });
  const host = await ScriptedHost.open(browser, server);
  try {
    const chat = await sidecar.openChat({ cwd: box.workspace });
    // As the extension's panel: the page's state from `reset`, then the events, coalesced.
    // The page's `received` of each batch: when the page has it (the bench's messages are not
    // the extension's webview channel, which the page answers itself).
    const deliver = (message: HostMessage | { type: 'bench-peer'; event: ChatEvent }) =>
      void host.page
        .evaluate((m) => window.postMessage(m, '*'), message as unknown as Record<string, unknown>)
        .then(() => {
          if (message.type === 'events') feed.received();
        })
        .catch(() => undefined);
    const feed = new PageFeed(deliver);
    feed.reset({
      type: 'reset',
      state: toMessage(chat.state, Infinity),
      info: chat.info ?? INFO,
      workspaceFolders: [],
      allowBypassPermissions: false,
    });
    let hostGotEnd = NaN;
    chat.onEvent((event) => {
      if (event.kind === 'notification' && event.method === 'claude/turnEnded')
        hostGotEnd = performance.timeOrigin + performance.now();
      if (peer) deliver({ type: 'bench-peer', event });
      else feed.event(event, chat.state.rev);
    });
    await host.frame();
    await host.page.focus('textarea.prompt');
    await host.page.waitForTimeout(1000);
    await instrument(host.page, peer);
    const metrics = await host.page.context().newCDPSession(host.page);
    await metrics.send('Performance.enable', { timeDomain: 'threadTicks' });
    const cdp = profile ? await host.page.context().newCDPSession(host.page) : null;
    if (cdp) {
      await cdp.send('Profiler.enable');
      await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
      await cdp.send('Profiler.start');
    }
    const cpuBefore = await cpuTimes(metrics);
    const typing = { on: true };
    await host.page.exposeFunction('__benchEnded', () => (typing.on = false));
    await chat.send('write the long answer');
    const deadline = Date.now() + 120_000;
    for (let i = 0; typing.on; i++) {
      if (Date.now() > deadline) throw new Error('the turn did not end within 120 s');
      await host.page.keyboard.press('abcdefghij'[i % 10]!);
      await host.page.waitForTimeout(KEY_EVERY_MS);
    }
    await host.page.waitForFunction(
      () => !Number.isNaN((window as unknown as { __bench: { drawnAt: number } }).__bench.drawnAt),
      null,
      { timeout: 30_000 },
    );
    const cpuAfter = await cpuTimes(metrics);
    await host.page.waitForTimeout(300);
    const page = await host.page.evaluate(() => {
      const bench = (
        window as unknown as {
          __bench: {
            tasks: number[];
            late: number[];
            echoes: [number, number][];
            longestGap: number;
            running: boolean;
            messages: number;
            events: number;
            endAt: number;
            drawnAt: number;
          };
        }
      ).__bench;
      bench.running = false;
      const echoes = bench.echoes
        .filter(([typedAt]) => typedAt < bench.endAt)
        .map(([, echo]) => echo)
        .sort((a, b) => a - b);
      return {
        origin: performance.timeOrigin,
        endAt: bench.endAt,
        drawnAt: bench.drawnAt,
        figures: {
          longestTaskMs: Math.max(0, ...bench.tasks),
          longestStallMs: Math.max(0, ...bench.late),
          longestFrameGapMs: bench.longestGap,
          keyEchoMedianMs: echoes.length ? echoes[Math.floor(echoes.length / 2)]! : null,
          keyEchoMaxMs: echoes.at(-1) ?? null,
          keys: echoes.length,
          events: bench.events,
          messages: bench.messages,
        },
      };
    });
    // Both wall clocks of this machine (performance.timeOrigin + now in each process).
    const sent = Number(fs.readFileSync(sentLog, 'utf8').trim().split('\n')[0]);
    if (!Number.isFinite(sent)) throw new Error(`the relay noted no claude/turnEnded in ${sentLog}`);
    if (cdp) {
      const { profile: taken } = await cdp.send('Profiler.stop');
      console.error(`\ndaemon (${peer ? 'peer' : 'page'}): self time by function\n${topFunctions(taken).join('\n')}`);
    }
    return {
      ...page.figures,
      endOnScreenMs: page.origin + page.drawnAt - sent,
      endArrivedMs: page.origin + page.endAt - sent,
      hostArrivedMs: hostGotEnd - sent,
      threadCpuMs: cpuAfter.task - cpuBefore.task,
      layoutCpuMs: cpuAfter.layout - cpuBefore.layout,
    };
  } finally {
    await host.page.close();
    await sidecar.dispose();
    fs.rmSync(box.root, { recursive: true, force: true });
  }
}

function option(args: string[], name: string, fallback: number): number {
  const at = args.indexOf(name);
  return at >= 0 ? Number(args[at + 1]) : fallback;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const runs = option(args, '--runs', 3);
  const chars = option(args, '--chars', FULL_CHARS);
  const json = args.includes('--json');
  const profile = args.includes('--profile');
  const daemon = args.includes('--daemon');
  const withValue = new Set(['--runs', '--chars'].map((o) => args.indexOf(o) + 1).filter((i) => i > 0));
  const dists = args.filter((a, i) => !a.startsWith('--') && !withValue.has(i));
  const folders = dists.length ? dists.map((d) => path.resolve(d)) : [path.resolve(__dirname, '../../../dist')];
  // A shorter answer streams at the same rate: fewer notifications over less time.
  const notifications = Math.max(1, Math.round((FULL_NOTIFICATIONS * chars) / FULL_CHARS));
  const streamMs = (FULL_STREAM_MS * notifications) / FULL_NOTIFICATIONS;
  const text = answer(chars);
  const batches = stream(text, notifications);
  const say = json ? console.error : console.log;
  say(
    daemon
      ? `answer: ${text.length} characters from the real daemon and CLI (the stand-in model, 20-character deltas), timed from the daemon's send`
      : `answer: ${text.length} characters in ${batches.length - 2} delta notifications over ${streamMs.toFixed(0)} ms`,
  );
  const browser = await launch();
  const servers = folders.map((d) => new PageServer(d));
  for (const s of servers) await s.start();
  // Every build of the page, and the peer on the first build's page.
  const renderers = [
    ...servers.map((server, i) => ({ name: folders[i]!, server, peer: false })),
    ...(args.includes('--peer') ? [{ name: 'peer: text nodes', server: servers[0]!, peer: true }] : []),
  ];
  const results = renderers.map(() => [] as Figures[]);
  // `--daemon`: the stand-in model streams the same answer, as fast as the CLI takes it.
  const modelDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-model-'));
  const model = daemon
    ? await startModel(
        { rules: [{ match: '(?i)long', steps: [[{ text }]] }], default: [[{ text: 'ok' }]], chunk: 20, delay: 0 },
        modelDir,
      )
    : null;
  try {
    for (let r = 0; r < runs; r++) {
      for (const [i, { server, peer }] of renderers.entries()) {
        const first = profile && r === 0;
        results[i]!.push(
          model
            ? await runDaemon(browser, server, model, peer, first)
            : await run(browser, server, batches, streamMs, peer, first),
        );
      }
    }
  } finally {
    await browser.close();
    for (const s of servers) await s.stop();
    await model?.stop();
    fs.rmSync(modelDir, { recursive: true, force: true });
  }
  if (json) {
    const out = {
      daemon,
      answerChars: text.length,
      notifications: batches.length - 2,
      streamMs,
      keyEveryMs: KEY_EVERY_MS,
      renderers: renderers.map((r, i) => ({ name: r.name, peer: r.peer, runs: results[i] })),
    };
    console.log(JSON.stringify(out));
    return;
  }
  for (const [i, { name }] of renderers.entries()) {
    console.log(`\n${name} (${runs} runs: median [min-max])`);
    for (const key of FIGURES) {
      const values = results[i]!.map((f) => f[key] ?? NaN).sort((a, b) => a - b);
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
