#!/usr/bin/env node
// Bench: the chat page in a real VS Code (code-server's, in headless Chromium) while a ~60 KB
// markdown answer streams from the real daemon and CLI (the stand-in model, 20-character
// deltas at full speed, the extension's coalesceDeltasMs 16) and the user types into the
// prompt: the path issue 43 measures, the extension host and VS Code's webview messaging
// included. The daemon runs behind test/webview/timestamp-relay.mjs, which notes when
// claude/turnEnded left it; the end is timed from there (the daemon's send), not from the
// page's receiving it. Measured in the chat's frame, per run (one new chat each):
//
// - the longest task of the page's thread ('longtask': 50 ms or more, else 0), the longest
//   stall (a 10 ms timer's lateness) and the longest gap between animation frames;
// - key echo: a key every 25 ms from the prompt's send to claude/turnEnded, from the key
//   event's time stamp to the end of the frame that draws it; median and max; and the median
//   of 40 keys typed just before the prompt is sent (idleEchoMedianMs: no answer streaming,
//   the same page and load);
// - end on screen: from the daemon's send of claude/turnEnded to the frame after the one
//   that drew the answer's end and its footer; when the extension host posted turnEnded to
//   the page (its feed stamps each message: the host's share) and when it reached the page;
//   endFrames: the page's animation frames from then until the end was drawn;
//   endMessageBytes: the size of the message that brought turnEnded (as JSON); answerOnScreenMs:
//   from the prompt's send to the same frame (what the user waits for the whole answer: a build
//   that only held the CLI back would draw the end sooner after turnEnded, the answer later); with --trace,
//   marks named 'bench: ...' show where each batch and the end reached the page;
// - the messages the page got from the host while it streamed, and each one's way from the
//   host's postMessage to the page (both wall clocks of this machine);
// - the CPU time of each process of the path from the prompt's send to the end on screen
//   (/proc: the renderer process, the browser's others, code-server, its extension host, the
//   relay, the daemon and the CLI it started for the chat, that one with its start-up), and
//   the time their threads waited for a core meanwhile (<role>WaitMs: schedstat's run delay,
//   summed over threads);
// - the renderer's main thread (the workbench's and the page's: one thread) from the daemon's
//   send of turnEnded until it reached the page: its time on a core (endMainRanMs: the work
//   queued before the message) and waiting for one (endMainWaitedMs), sampled with each key;
//   the same over the whole answer (mainRanMs, mainWaitedMs);
//   --no-typing runs without keys; --profile prints where the longest busy stretch went,
//   --trace the longest tasks and steps, --trace-idle a trace of the keys typed before the send
//   (every thread's frame steps), --save DIR keeps each run's profile and traces;
// - with --trace, in the renderer main thread's CPU time (which the machine's load does not
//   stretch): its longest task while the answer streamed (longestTaskCpuMs), and from
//   turnEnded's arrival until the end was drawn its CPU (endCpuMs), the page's frames' share
//   (endFramesCpuMs) and the elements restyled (endRestyledElements);
// - the renderer thread's CPU time from the prompt's send to the end on screen (thread time),
//   and the parts of it in script and in style and layout: VS Code's workbench shares the
//   thread, so this is the page's work and the workbench's around it (messages included).
//
//   node test/vscode/page-bench.mjs [--runs 3] [--rounds 1] [--chars 60000] [--delay-ms 0] [--json] [--extension DIR ...] [--cli PATH] [--peer] [--webview-site]
//
// With --peer, the peer runs after the builds, in the same run: the same extension with its
// page replaced by test/webview/peer-page.ts (each delta appended as a text node, the end
// followed; no markdown): the practical limit of drawing the stream in VS Code's webview on
// this machine, which the machine's load moves as it moves the page's figures.
//
// With --webview-site the workbench serves its webviews from a site of their own (each on a
// *.localhost host: host/ui.mjs openWorkbench's webviewSite), as VS Code desktop (a
// vscode-webview:// origin per webview) and vscode.dev (*.vscode-cdn.net) do; code-server
// serves them from the workbench's own origin. Chromium's site isolation then runs the page in
// a renderer process of its own: its thread is not the workbench's, and the figures of the
// thread (CPU, tasks in a trace) are the page's renderer's alone; the processes' CPU by role
// sums both renderers.
//
// With --long 1000,10000 it measures long sessions instead (issue 43's curve): for each size a
// session grown by bench/grow_session.py (tests/long_session.py: a real session's turns
// repeated) in a HOME of its own, resumed through "Claude: Resume a Past Session..." and
// timed in VS Code's webview host frame (its frames share the renderer thread):
//
// - open: from the user's pick of the session (openFromPickMs) until the frame after the one
//   that shows the conversation's last entry, and from the daemon's send of claude/newChannel's
//   answer (openFromAnswerMs, the relay notes it; negative when the end is drawn before it, from
//   the stored last page while the CLI starts); answeredFromPickMs: the pick to that answer;
// - the longest task of the thread while opening, and then while the chat is scrolled to its
//   top (set to 0 again and again, as a user dragging the scroll bar up, until no earlier
//   page is left; at most --scroll-s seconds, default 120), that scroll's time, and the
//   entry elements in the page at the end (entriesDrawn: a build that draws only the chunks
//   near the view has those alone); the longest of the chat page's own tasks (the longtask entries
//   named same-origin-descendant); the renderer thread's CPU time in each part (thread time:
//   the workbench's work and the page's);
// - --whole adds a run of each build with claudeSidecar.pageEntries 0 (the whole transcript
//   at once, as before paging); an older build is given with --extension.
//
// - --trace: the longest tasks and steps while it opens and while it scrolls (--save DIR keeps
//   the traces), and the thread's longest task in each, in its CPU time (longestTaskCpu*Ms);
//   --heap FILE: a heap snapshot of the page's renderer once scrolled (FILE.<time>.heapsnapshot).
//
//   node test/vscode/page-bench.mjs --long 1000,10000 [--runs 1] [--whole] [--trace] [--extension DIR ...]
// Needs `npm run build` (or, per --extension, a folder with package.json and dist/), the
// toolchain (scripts/toolchain.sh) and `uv sync` at the root. Several --extension folders
// (builds to compare) run in turn, each in its own code-server, one chat per run.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { exitForPrerequisite, PrerequisiteError, sleep, VSCODE_DIR } from '../host/common.mjs';
import { writeHeapSnapshot } from '../host/heap-snapshot.mjs';
import { closeWorkbench, openWorkbench, runCommand, startCodeServer } from '../host/ui.mjs';
import { sandbox, startModel } from './run.mjs';

const RELAY = path.join(VSCODE_DIR, 'test', 'webview', 'timestamp-relay.mjs');
const KEY_EVERY_MS = 25;
/** --webview-site: the webviews on a site of their own (openWorkbench's webviewSite). */
const webviewSite = process.argv.includes('--webview-site');
/** Keys typed before the prompt is sent, for the echo with no answer streaming. */
const IDLE_KEYS = 40;
/** --no-typing: no keys while it streams (the figures of a user who reads; key echo then none). */
const typing = !process.argv.includes('--no-typing');
/** Where --profile and --trace also write what they took (a .cpuprofile and a trace JSON per run, for DevTools). */
const saveDir = process.argv.includes('--save') ? process.argv[process.argv.indexOf('--save') + 1] : null;
if (saveDir) fs.mkdirSync(saveDir, { recursive: true });
const END = 'That is the whole answer. THE END.';

function option(name, fallback) {
  const at = process.argv.indexOf(name);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
}

/** A long answer with what answers have: headings, paragraphs, lists, code, a table (as streaming.bench.ts). */
function answer(chars) {
  const parts = [];
  for (let i = 0; parts.join('').length < chars; i++) {
    const lines = Array.from(
      { length: 8 },
      (_, j) => `def step_${i}_${j}(value: int) -> int:\n    return value * ${j} + ${i}\n`,
    );
    parts.push(
      `## Step ${i + 1}: the ${['parser', 'cache', 'router', 'store'][i % 4]}\n\n`,
      `This part explains **step ${i + 1}** with \`inline code\`, a [link](src/file${i}.ts#L${i + 3}) and some ` +
        'prose that wraps over more than one line in a narrow panel, as answers do.\n\n',
      `- first point of step ${i + 1}\n- second point, a little longer than the first\n- third point\n\n`,
      '```python\n' + lines.join('') + '```\n\n',
      `| name | value |\n|---|---|\n| step | ${i + 1} |\n| size | ${i * 3} |\n\n`,
    );
  }
  return `${parts.join('')}${END}`;
}

/** The chat webview's inner frame whose transcript has `count` prompts drawn so far (VS Code nests the page in two iframes). */
async function chatFrame(page, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const frame of page.frames()) {
      const visible = await frame
        .locator('textarea.prompt:visible')
        .count()
        .catch(() => 0);
      const fresh = await frame
        .locator('.entry')
        .count()
        .catch(() => 1);
      if (visible && !fresh) return frame;
    }
    if (Date.now() > deadline) throw new Error('no new chat webview with a prompt box');
    await sleep(200);
  }
}

/** The probes of the page's thread, as in test/webview/streaming.bench.ts, and the end's arrival and drawing. */
function instrument() {
  const bench = { tasks: [], late: [], echoes: [], longestGap: 0, running: true, lastKeyAt: NaN, endFrames: NaN };
  Object.assign(bench, { messages: 0, events: 0, endAt: NaN, drawnAt: NaN, sentAt: NaN, transits: [] });
  Object.assign(bench, { footerAt: NaN, footerPostedAt: NaN });
  window.__bench = bench;
  // A task's name says whose it was: 'self' (the page's), or a frame around it ('cross-origin-ancestor': VS Code's workbench on the same thread).
  bench.taskNames = {};
  new PerformanceObserver((list) =>
    list.getEntries().forEach((e) => {
      bench.tasks.push(e.duration);
      bench.taskNames[e.name] = Math.max(bench.taskNames[e.name] ?? 0, e.duration);
    }),
  ).observe({
    type: 'longtask',
  });
  const probe = (due) =>
    setTimeout(() => {
      bench.late.push(performance.now() - due);
      if (bench.running) probe(performance.now() + 10);
    }, 10);
  probe(performance.now() + 10);
  let lastFrame = performance.now();
  const watch = (now) => {
    bench.longestGap = Math.max(bench.longestGap, now - lastFrame);
    lastFrame = now;
    if (bench.running) requestAnimationFrame(watch);
  };
  requestAnimationFrame(watch);
  window.addEventListener('keydown', (e) => (bench.lastKeyAt = e.timeStamp), true);
  document.querySelector('textarea.prompt').addEventListener('input', () => {
    const typedAt = bench.lastKeyAt;
    requestAnimationFrame(() => {
      const after = new MessageChannel();
      after.port1.onmessage = () => bench.echoes.push([typedAt, performance.now() - typedAt]);
      after.port2.postMessage(null);
    });
  });
  window.addEventListener(
    'message',
    (message) => {
      const data = message.data ?? {};
      // This build's messages (`events`) or an older one's (one `event` each).
      const events =
        data.type === 'events' ? data.events.map((e) => e.event) : data.type === 'event' ? [data.event] : [];
      if (!events.length) return;
      bench.messages++;
      bench.events += events.length;
      // How long it took from the host's postMessage to here (both wall clocks of this machine).
      if (data.postedAt) bench.transits.push(performance.timeOrigin + performance.now() - data.postedAt);
      const ended = events.some((e) => e.kind === 'notification' && e.method === 'claude/turnEnded');
      // The turn's footer (its entry comes after claude/turnEnded): when the host posted it and when it came.
      if (
        events.some((e) => e.kind === 'notification' && e.method === 'claude/entry' && e.params.entry.kind === 'turn')
      ) {
        bench.footerAt = performance.now();
        bench.footerPostedAt = data.postedAt ?? NaN;
      }
      // In a trace (--trace): where each batch, and the turn's end, reached the page.
      performance.mark(ended ? 'bench: turnEnded reached the page' : 'bench: events reached the page');
      if (!ended) return;
      if (!Number.isNaN(bench.endAt)) return;
      bench.endAt = performance.now();
      // When the extension host posted it (this build's feed stamps its messages), and its size.
      bench.postedAt = data.postedAt ?? NaN;
      bench.endBytes = JSON.stringify(data).length;
      // The page's frames from then until its end is drawn (its share, in frames: what the
      // machine's load does not change).
      bench.endFrames = 0;
      const check = () => {
        bench.endFrames++;
        const text = document.querySelector('.entry.text:not(.streaming)')?.textContent ?? '';
        if (text.trim().endsWith('THE END.') && document.querySelector('.entry.turn')) {
          requestAnimationFrame(() => {
            bench.drawnAt = performance.now();
            performance.mark('bench: end drawn');
          });
        } else requestAnimationFrame(check);
      };
      requestAnimationFrame(check);
    },
    true,
  );
}

/** Who a process of the bench's tree is, by its command line: the parts of the path issue 43 times. */
function processRole(cmdline) {
  if (/--type=renderer/.test(cmdline)) return 'renderer';
  if (/chrom/i.test(cmdline)) return 'browser';
  if (/--type=extensionHost|extensionHostProcess|bootstrap-fork.*extensionHost/.test(cmdline)) return 'extensionHost';
  if (/code-server|server-main|bootstrap-fork/.test(cmdline)) return 'codeServer';
  if (/timestamp-relay/.test(cmdline)) return 'relay';
  if (/scripted-model/.test(cmdline)) return 'model';
  if (/_bundled\/claude|(^|\/)claude( |$)/.test(cmdline)) return 'cli';
  if (/claude-sidecar|claude_sidecar/.test(cmdline)) return 'daemon';
  return 'other';
}

/** A thread's time on a core and waiting on the run queue for one (ms; Linux /proc schedstat), or null. */
function schedstat(file) {
  try {
    const [ran, waited] = fs.readFileSync(file, 'utf8').split(' ').map(Number);
    return { ran: ran / 1e6, waited: waited / 1e6 };
  } catch {
    return null; // gone meanwhile, or a kernel without schedstats
  }
}

/** The time a process's threads waited for a core so far (ms, summed over its threads). */
function processWait(pid) {
  let waited = 0;
  try {
    for (const tid of fs.readdirSync(`/proc/${pid}/task`))
      waited += schedstat(`/proc/${pid}/task/${tid}/schedstat`)?.waited ?? 0;
  } catch {
    // gone meanwhile
  }
  return waited;
}

/** The CPU time (user and system, ms) of every process under this one, and the time its threads
 * waited for a core (schedstat's run delay), by pid with its role (Linux /proc). */
function processCpu() {
  const tick = 10; // USER_HZ is 100 on Linux
  const procs = new Map();
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      procs.set(Number(pid), {
        ppid: Number(fields[1]),
        ms: (Number(fields[11]) + Number(fields[12])) * tick,
        cmdline,
      });
    } catch {
      // gone meanwhile
    }
  }
  const mine = (pid) => {
    for (let at = pid; at > 1; at = procs.get(at)?.ppid ?? 0) if (at === process.pid) return true;
    return false;
  };
  const byPid = new Map();
  for (const [pid, p] of procs)
    if (pid !== process.pid && mine(pid))
      byPid.set(pid, { role: processRole(p.cmdline), ms: p.ms, waited: processWait(pid) });
  return byPid;
}

/** CPU ms and ms waiting for a core by role between two processCpu() readings (a process started
 * meanwhile counts whole). */
function cpuSpent(before, after) {
  const spent = {};
  for (const [pid, { role, ms, waited }] of after) {
    spent[`${role}CpuMs`] = (spent[`${role}CpuMs`] ?? 0) + ms - (before.get(pid)?.ms ?? 0);
    spent[`${role}WaitMs`] = (spent[`${role}WaitMs`] ?? 0) + waited - (before.get(pid)?.waited ?? 0);
  }
  return spent;
}

/** The renderers' main threads (their tid is their pid): what ran the workbench and the page. */
function rendererMains(processes) {
  return [...processes].filter(([, p]) => p.role === 'renderer').map(([pid]) => `/proc/${pid}/task/${pid}/schedstat`);
}

/** The renderers' main threads' time on a core and waiting for one so far (ms), at this wall time. */
function sampleMains(files) {
  let ran = 0;
  let waited = 0;
  for (const file of files) {
    const s = schedstat(file);
    ran += s?.ran ?? 0;
    waited += s?.waited ?? 0;
  }
  return { at: performance.timeOrigin + performance.now(), ran, waited };
}

/** A sampled value at wall time `at`, linear between the samples around it. */
function sampledAt(samples, at, key) {
  const after = samples.findIndex((s) => s.at >= at);
  if (after <= 0) return samples[after < 0 ? samples.length - 1 : 0][key];
  const [a, b] = [samples[after - 1], samples[after]];
  return a[key] + ((b[key] - a[key]) * (at - a.at)) / (b.at - a.at);
}

/**
 * A CDP session on the renderer that runs `frame`: the frame's own when it runs in a process
 * of its own (--webview-site: an out-of-process frame, or the frame holding it), else the
 * page's (code-server's webviews share the workbench's renderer).
 */
async function sessionFor(page, frame) {
  for (let at = frame; at; at = at.parentFrame()) {
    const session = await page
      .context()
      .newCDPSession(at)
      .catch(() => null);
    if (session) return session;
  }
  return page.context().newCDPSession(page);
}

/** The main thread (pid, tid) in a trace of the renderer that ran the chat page's script
 * (dist/webview.js): the workbench's too unless the webviews run on a site of their own. */
function pageMain(events) {
  const mains = events.filter((e) => e.name === 'thread_name' && e.args.name === 'CrRendererMain');
  const ranPage = (m) =>
    events.some(
      (e) =>
        e.pid === m.pid &&
        e.tid === m.tid &&
        (e.name === 'EvaluateScript' || e.name === 'FunctionCall') &&
        /\/dist\/webview\.js/.test(e.args?.data?.url ?? ''),
    );
  return mains.find(ranPage) ?? mains[0];
}

/** The renderer thread's CPU time so far (Performance.getMetrics in thread time), in ms. */
async function cpuTimes(cdp) {
  const { metrics } = await cdp.send('Performance.getMetrics');
  const metric = (name) => (metrics.find((m) => m.name === name)?.value ?? 0) * 1000;
  return {
    task: metric('TaskDuration'),
    script: metric('ScriptDuration'),
    layout: metric('LayoutDuration') + metric('RecalcStyleDuration'),
  };
}

/** The longest stretch without an idle sample in a CPU profile, and the functions (self time, and the outermost
 * function of the page's own script on the stack) it spent its time in. */
function longestBusy(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const name = (n) =>
    `${n.callFrame.functionName || '(anonymous)'} ${path.basename(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
  const outer = (id) => {
    let found = null;
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const n = byId.get(at);
      if (n?.callFrame.url.endsWith('webview.js')) found = n;
    }
    return found ? name(found) : '(not the page script)';
  };
  let best = { ms: 0, from: 0, to: 0 };
  let start = 0;
  let ms = 0;
  profile.samples.forEach((id, i) => {
    const idle = byId.get(id)?.callFrame.functionName === '(idle)';
    const dt = (profile.timeDeltas[i] ?? 0) / 1000;
    if (idle) {
      ms = 0;
      start = i + 1;
    } else {
      ms += dt;
      if (ms > best.ms) best = { ms, from: start, to: i };
    }
  });
  const self = new Map();
  const outers = new Map();
  for (let i = best.from; i <= best.to; i++) {
    const id = profile.samples[i];
    const dt = (profile.timeDeltas[i] ?? 0) / 1000;
    const n = byId.get(id);
    if (!n) continue;
    self.set(name(n), (self.get(name(n)) ?? 0) + dt);
    outers.set(outer(id), (outers.get(outer(id)) ?? 0) + dt);
  }
  const top = (m) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 12)
      .map(([k, v]) => `  ${v.toFixed(1).padStart(7)} ms  ${k}`)
      .join('\n');
  return `longest busy stretch ${best.ms.toFixed(1)} ms\nself time:\n${top(self)}\nby the page's outermost function:\n${top(outers)}`;
}

/** The longest tasks of a trace and the longest rendering steps (style, layout, paint, script) with what they name. */
function longestTraceEvents(trace) {
  const events = (trace.traceEvents ?? trace).filter((e) => e.ph === 'X' && e.dur);
  const threads = new Map(
    (trace.traceEvents ?? trace).filter((e) => e.name === 'thread_name').map((e) => [`${e.pid}:${e.tid}`, e.args.name]),
  );
  const show = (e) => {
    const d = e.args?.data ?? e.args?.beginData ?? {};
    const what = [
      d.url,
      d.functionName,
      d.elementCount && `${d.elementCount} elements`,
      d.dirtyObjects && `${d.dirtyObjects}/${d.totalObjects} objects`,
      d.frame,
    ]
      .filter(Boolean)
      .join(' ');
    return `  ${(e.dur / 1000).toFixed(1).padStart(7)} ms  ${e.name} [${threads.get(`${e.pid}:${e.tid}`) ?? e.tid}] ${what}`.slice(
      0,
      220,
    );
  };
  const longest = (names, n) =>
    events
      .filter((e) => names.includes(e.name))
      .sort((a, b) => b.dur - a.dur)
      .slice(0, n)
      .map(show)
      .join('\n');
  // The page's frame: the one its script runs in. Its layouts, counted in objects: what the
  // page made the browser lay out, whatever the load on the machine.
  const pageFrame = events.find((e) => e.name === 'FunctionCall' && e.args?.data?.url?.endsWith('webview.js'))?.args
    .data.frame;
  const layouts = events.filter((e) => e.name === 'Layout' && (e.args?.beginData?.frame ?? '') === pageFrame);
  const objects = layouts.map((e) => e.args.beginData.dirtyObjects ?? 0);
  const summary =
    `the page's layouts: ${layouts.length}, ${objects.reduce((a, b) => a + b, 0)} objects laid out in all, ` +
    `at most ${Math.max(0, ...objects)} at once, ${(layouts.reduce((a, e) => a + e.dur, 0) / 1000).toFixed(1)} ms\n`;
  // Where the thread's time went, by step (all frames: VS Code's workbench shares the thread).
  const bySteps = new Map();
  for (const e of events) {
    if (['RunTask', 'ThreadControllerImpl::RunTask'].includes(e.name)) continue;
    bySteps.set(e.name, (bySteps.get(e.name) ?? 0) + e.dur / 1000);
  }
  const steps = [...bySteps.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 14)
    .map(([k, v]) => `${k} ${v.toFixed(0)}`)
    .join(', ');
  return (
    summary +
    `time by step (ms, nested steps counted in each): ${steps}\n` +
    `longest tasks:\n${longest(['RunTask', 'ThreadControllerImpl::RunTask'], 8)}\n` +
    `longest steps:\n${longest(['UpdateLayoutTree', 'Layout', 'Paint', 'PrePaint', 'Layerize', 'FunctionCall', 'EvaluateScript', 'ParseHTML', 'HitTest', 'V8.GC_SCAVENGER', 'MajorGC', 'MinorGC', 'TimerFire', 'EventDispatch', 'FireAnimationFrame'], 16)}`
  );
}

/**
 * What a trace says of the renderer's main thread, in CPU time (what the machine's load does
 * not stretch, as it does a task's time): its longest task while the answer streamed (the
 * workbench's or the page's), and from turnEnded's arrival in the page until the end was
 * drawn: its CPU, the page's frames' share (onFrame) and the elements restyled.
 */
function traceFigures(trace) {
  const events = trace.traceEvents ?? trace;
  const mark = (name) => events.find((e) => e.name === name)?.ts;
  const [first, arrived, drawn] = [
    mark('bench: events reached the page'),
    mark('bench: turnEnded reached the page'),
    mark('bench: end drawn'),
  ];
  const main = pageMain(events);
  if (!main || !arrived || !drawn) return {};
  const onMain = events.filter((e) => e.ph === 'X' && e.pid === main.pid && e.tid === main.tid);
  const cpu = (list) => list.reduce((sum, e) => sum + (e.tdur ?? 0), 0) / 1000;
  const tasks = onMain.filter((e) => e.name === 'RunTask');
  const within = (from, to) => (e) => e.ts >= from && e.ts <= to;
  const endEvents = onMain.filter(within(arrived, drawn));
  return {
    longestTaskCpuMs: Math.max(0, ...tasks.filter(within(first ?? arrived, drawn)).map((e) => (e.tdur ?? 0) / 1000)),
    endCpuMs: cpu(endEvents.filter((e) => e.name === 'RunTask')),
    endFramesCpuMs: cpu(endEvents.filter((e) => e.name === 'FunctionCall' && e.args?.data?.functionName === 'onFrame')),
    endRestyledElements: endEvents
      .filter((e) => e.name === 'UpdateLayoutTree')
      .reduce((sum, e) => sum + (e.args?.elementCount ?? 0), 0),
  };
}

/** The longest task of the renderer's main thread in a trace, in its thread (CPU) time, ms. */
function longestTaskCpu(trace) {
  const events = trace.traceEvents ?? trace;
  const main = pageMain(events);
  if (!main) return NaN;
  const tasks = events.filter((e) => e.ph === 'X' && e.name === 'RunTask' && e.pid === main.pid && e.tid === main.tid);
  return Math.max(0, ...tasks.map((e) => (e.tdur ?? 0) / 1000));
}

/** What --trace-idle records: the timeline, and the compositor's and the frame scheduler's steps. */
const IDLE_TRACE_CATEGORIES = [
  'devtools.timeline',
  'disabled-by-default-devtools.timeline',
  'devtools.timeline.frame',
  'disabled-by-default-devtools.timeline.frame',
  'blink.user_timing',
  'cc',
  'input',
  'benchmark',
  'toplevel',
];

async function oneRun(page, sentLog, profile) {
  await runCommand(page, 'Claude: New Chat');
  const chat = await chatFrame(page);
  const prompt = chat.locator('textarea.prompt');
  await prompt.click();
  await page.keyboard.type('write the long answer');
  await sleep(1000);
  await chat.evaluate(instrument);
  // Key echo with no answer streaming, just before (the same page, load and keys): the
  // floor of VS Code's own way from a key to its frame on this machine at this moment.
  const idleFrom = await chat.evaluate(() => performance.now());
  // --trace-idle: a trace of these keys alone, every thread's frame steps (kept with --save).
  const tracingIdle = typing && process.argv.includes('--trace-idle');
  if (tracingIdle) {
    await page
      .context()
      .browser()
      .startTracing(page, { categories: [...IDLE_TRACE_CATEGORIES] });
  }
  if (typing) {
    for (let i = 0; i < IDLE_KEYS; i++) {
      await page.keyboard.press('abcdefghij'[i % 10]);
      await sleep(KEY_EVERY_MS);
    }
    await sleep(200);
  }
  if (tracingIdle) {
    const trace = (await page.context().browser().stopTracing()).toString();
    if (saveDir) fs.writeFileSync(path.join(saveDir, `trace-idle-${Date.now()}.json`), trace);
  }
  let cdp = null;
  if (profile) {
    cdp = await sessionFor(page, chat);
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
    await cdp.send('Profiler.start');
  }
  // The renderer thread's CPU time (VS Code's workbench and the page share it): the work
  // itself, which the machine's other load does not inflate as it does the times.
  const metrics = await sessionFor(page, chat);
  await metrics.send('Performance.enable', { timeDomain: 'threadTicks' });
  const cpuBefore = await cpuTimes(metrics);
  const tracing = process.argv.includes('--trace');
  if (tracing) {
    await page
      .context()
      .browser()
      .startTracing(page, {
        categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'blink.user_timing'],
      });
  }
  fs.writeFileSync(sentLog, '');
  const processesBefore = processCpu();
  const mains = rendererMains(processesBefore);
  const samples = [sampleMains(mains)];
  await page.keyboard.press('Enter');
  await chat.evaluate(() => (window.__bench.sentAt = performance.now()));
  const deadline = Date.now() + 120_000;
  for (let i = 0; ; i++) {
    if (!Number.isNaN(await chat.evaluate(() => window.__bench.endAt))) break;
    if (Date.now() > deadline) throw new Error('the turn did not end within 120 s');
    if (typing) await page.keyboard.press('abcdefghij'[i % 10]);
    samples.push(sampleMains(mains));
    await sleep(KEY_EVERY_MS);
  }
  samples.push(sampleMains(mains));
  await chat.waitForFunction(() => !Number.isNaN(window.__bench.drawnAt), null, { timeout: 30_000 });
  const cpuAfter = await cpuTimes(metrics);
  const processes = cpuSpent(processesBefore, processCpu());
  await sleep(300);
  if (cdp) {
    const { profile: taken } = await cdp.send('Profiler.stop');
    console.error(longestBusy(taken));
    if (saveDir) fs.writeFileSync(path.join(saveDir, `profile-${Date.now()}.cpuprofile`), JSON.stringify(taken));
  }
  let traced = {};
  if (tracing) {
    const trace = (await page.context().browser().stopTracing()).toString();
    if (saveDir) fs.writeFileSync(path.join(saveDir, `trace-${Date.now()}.json`), trace);
    console.error(longestTraceEvents(JSON.parse(trace)));
    traced = traceFigures(JSON.parse(trace));
  }
  const seen = await chat.evaluate((idleFrom) => {
    const bench = window.__bench;
    bench.running = false;
    const echoes = bench.echoes
      .filter(([typedAt]) => typedAt > bench.sentAt && typedAt < bench.endAt)
      .map(([, echo]) => echo)
      .sort((a, b) => a - b);
    const idleEchoes = bench.echoes
      .filter(([typedAt]) => typedAt > idleFrom && typedAt < bench.sentAt)
      .map(([, echo]) => echo)
      .sort((a, b) => a - b);
    return {
      origin: performance.timeOrigin,
      endAt: bench.endAt,
      drawnAt: bench.drawnAt,
      sentAt: bench.sentAt,
      postedAt: bench.postedAt,
      footerAt: bench.footerAt,
      footerPostedAt: bench.footerPostedAt,
      figures: {
        longestTaskMs: Math.max(0, ...bench.tasks),
        longestTaskBy: bench.taskNames,
        longestStallMs: Math.max(0, ...bench.late),
        longestFrameGapMs: bench.longestGap,
        keyEchoMedianMs: echoes.length ? echoes[Math.floor(echoes.length / 2)] : null,
        keyEchoMaxMs: echoes.at(-1) ?? null,
        keys: echoes.length,
        idleEchoMedianMs: idleEchoes.length ? idleEchoes[Math.floor(idleEchoes.length / 2)] : null,
        endFrames: bench.endFrames,
        endMessageBytes: bench.endBytes,
        events: bench.events,
        messages: bench.messages,
        ...(bench.transits.length
          ? {
              transitMedianMs: [...bench.transits].sort((a, b) => a - b)[Math.floor(bench.transits.length / 2)],
              transitMaxMs: Math.max(...bench.transits),
              transits: bench.transits.map(Math.round),
            }
          : {}),
      },
    };
  }, idleFrom);
  const sent = Number(fs.readFileSync(sentLog, 'utf8').trim().split('\n')[0]);
  if (!Number.isFinite(sent)) throw new Error(`the relay noted no claude/turnEnded in ${sentLog}`);
  // Both wall clocks of this machine (performance.timeOrigin + now in each process).
  return {
    ...seen.figures,
    endOnScreenMs: seen.origin + seen.drawnAt - sent,
    // What the user waits for the whole answer: from the prompt's send until its end is on screen.
    answerOnScreenMs: seen.drawnAt - seen.sentAt,
    endArrivedMs: seen.origin + seen.endAt - sent,
    // The extension host's share: from the daemon's send to its postMessage to the page.
    ...(Number.isFinite(seen.postedAt) ? { endPostedMs: seen.postedAt - sent } : {}),
    // The turn's footer, which the end on screen waits for: when the host posted it, when it came.
    ...(Number.isFinite(seen.footerPostedAt) ? { footerPostedMs: seen.footerPostedAt - sent } : {}),
    ...(Number.isFinite(seen.footerAt) ? { footerArrivedMs: seen.origin + seen.footerAt - sent } : {}),
    // The renderer's main thread from the daemon's send of turnEnded until it reached the page:
    // its time on a core and waiting for one (schedstat, sampled with each key).
    endMainRanMs: sampledAt(samples, seen.origin + seen.endAt, 'ran') - sampledAt(samples, sent, 'ran'),
    endMainWaitedMs: sampledAt(samples, seen.origin + seen.endAt, 'waited') - sampledAt(samples, sent, 'waited'),
    // The same over the whole answer, from the prompt's send until turnEnded reached the page.
    mainRanMs: samples.at(-1).ran - samples[0].ran,
    mainWaitedMs: samples.at(-1).waited - samples[0].waited,
    threadCpuMs: cpuAfter.task - cpuBefore.task,
    scriptCpuMs: cpuAfter.script - cpuBefore.script,
    layoutCpuMs: cpuAfter.layout - cpuBefore.layout,
    ...processes,
    ...traced,
  };
}

/** The extension with its page replaced by the peer (test/webview/peer-page.ts), in a folder of its own. */
function peerExtension() {
  const to = fs.mkdtempSync(path.join(os.tmpdir(), 'page-bench-peer-'));
  for (const part of ['package.json', 'media', path.join('dist', 'extension.js')]) {
    fs.cpSync(path.join(VSCODE_DIR, part), path.join(to, part), { recursive: true });
  }
  execFileSync(
    path.join(VSCODE_DIR, 'node_modules', '.bin', 'esbuild'),
    [
      path.join(VSCODE_DIR, 'test', 'webview', 'peer-page.ts'),
      '--bundle',
      '--format=iife',
      '--log-level=warning',
      `--outfile=${path.join(to, 'dist', 'webview.js')}`,
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  fs.writeFileSync(path.join(to, 'dist', 'webview.css'), '');
  // The page's HTML loads dist/highlight.js too: the peer highlights nothing.
  fs.writeFileSync(path.join(to, 'dist', 'highlight.js'), '');
  return to;
}

/** What code-server needs of a build: its manifest, bundles and icons (not node_modules). */
function slimCopy(dir) {
  const to = fs.mkdtempSync(path.join(os.tmpdir(), 'page-bench-ext-'));
  for (const part of ['package.json', 'dist', 'media']) {
    fs.cpSync(path.join(dir, part), path.join(to, part), {
      recursive: true,
      filter: (p) => !p.endsWith('.vsix') && !p.endsWith('.map'),
    });
  }
  return to;
}

/**
 * Runs in every frame of the workbench as it starts (addInitScript); acts only in VS Code's
 * webview host frame (pre/index.html), which writes the chat page into its inner frame of the
 * same origin: notes the thread's long tasks (the inner frame's, the workbench's) and when the
 * frame after the one that shows the conversation's last entry ends.
 */
function longInstrument() {
  if (!location.pathname.endsWith('/pre/index.html')) return;
  const long = { origin: performance.timeOrigin, tasks: [], drawnAt: NaN };
  window.__long = long;
  new PerformanceObserver((list) =>
    list.getEntries().forEach((e) => long.tasks.push({ at: e.startTime, ms: e.duration, by: e.name })),
  ).observe({ type: 'longtask' });
  const watch = () => {
    for (const frame of document.querySelectorAll('iframe')) {
      // Null for a frame of another origin.
      const doc = frame.contentDocument;
      // The last entry (in the last chunk, of the last section, in a build that draws them).
      let last = doc?.querySelector('.entries')?.lastElementChild;
      while (last?.classList.contains('chunk') || last?.classList.contains('section')) last = last.lastElementChild;
      if (!last) continue;
      const box = last.getBoundingClientRect();
      if (box.bottom > 0 && box.top < doc.defaultView.innerHeight) {
        requestAnimationFrame(() => (long.drawnAt = performance.now()));
        return;
      }
    }
    requestAnimationFrame(watch);
  };
  requestAnimationFrame(watch);
}

/** The webview host frame (pre/index.html) whose chat page shows entries, and that page's frame. */
async function longFrames(page, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const frame of page.frames()) {
      if (!frame.url().includes('/pre/index.html')) continue;
      const drawn = await frame.evaluate(() => !Number.isNaN(window.__long?.drawnAt ?? NaN)).catch(() => false);
      if (!drawn) continue;
      const chat = frame.childFrames().find(() => true);
      if (chat) return { pre: frame, chat };
    }
    if (Date.now() > deadline) throw new Error('no chat page showed its last entry');
    await sleep(50);
  }
}

const wallNow = () => performance.timeOrigin + performance.now();

/** One resume of the long session: times and long tasks (see the header). */
async function longRun(page, sentLog, scrollCapMs) {
  await runCommand(page, 'View: Close All Editors');
  await runCommand(page, 'Claude: Resume a Past Session');
  const row = page.locator('.quick-input-widget .monaco-list-row').first();
  await row.waitFor({ timeout: 60_000 });
  // The renderer thread's CPU time (the workbench's and the page's: one thread), which the
  // machine's other load does not inflate as it does the times. With --webview-site the
  // page's renderer starts with its webview: its thread is timed from when the page shows the
  // end (no opening figure).
  let metrics = await page.context().newCDPSession(page);
  await metrics.send('Performance.enable', { timeDomain: 'threadTicks' });
  const cpuPicked = await cpuTimes(metrics);
  const tracing = process.argv.includes('--trace');
  // The tasks (RunTask) with their thread time: the longest task in CPU, which the load does not stretch.
  const traceCategories = ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'v8'];
  // --profile: the traces hold the JS's samples too (where a task's script went, in DevTools).
  if (process.argv.includes('--profile')) traceCategories.push('disabled-by-default-v8.cpu_profiler');
  if (tracing) await page.context().browser().startTracing(page, { categories: traceCategories });
  fs.writeFileSync(sentLog, '');
  const pickedAt = wallNow();
  await row.click();
  const { pre, chat } = await longFrames(page);
  const opened = await pre.evaluate(() => ({ origin: window.__long.origin, drawnAt: window.__long.drawnAt }));
  const drawnAt = opened.origin + opened.drawnAt;
  // A build that shows the stored last page while the CLI starts draws the end before the
  // resume's answer: the scroll starts once the chat's channel is open (the answer sent, the
  // page no longer saying it starts), as a user who scrolls up once Claude is ready.
  const sent = await answerSent(sentLog);
  await chat.waitForFunction(
    () => document.querySelector('.status-line .status-text')?.textContent !== 'Starting Claude…',
    null,
    {
      timeout: 120_000,
    },
  );
  await sleep(500); // the tasks that follow the first frame (the rest of the page's first layout)
  let cpuOpened = await cpuTimes(metrics);
  const opening = webviewSite ? {} : { threadCpuOpeningMs: cpuOpened.task - cpuPicked.task };
  if (webviewSite) {
    metrics = await sessionFor(page, chat);
    await metrics.send('Performance.enable', { timeDomain: 'threadTicks' });
    cpuOpened = await cpuTimes(metrics);
  }
  const traced = {};
  if (tracing) {
    const trace = (await page.context().browser().stopTracing()).toString();
    if (saveDir) fs.writeFileSync(path.join(saveDir, `trace-open-${Date.now()}.json`), trace);
    console.error(`opening:\n${longestTraceEvents(JSON.parse(trace))}`);
    traced.longestTaskCpuOpeningMs = longestTaskCpu(JSON.parse(trace));
    await page.context().browser().startTracing(page, { categories: traceCategories });
  }
  const scrollFrom = wallNow();
  let pages = 0;
  let capped = false;
  for (;;) {
    const now = await chat.evaluate(() => {
      const transcript = document.querySelector('.transcript');
      transcript.scrollTop = 0;
      const row = document.querySelector('.older-row');
      return { more: Boolean(row && !row.hidden), loading: Boolean(row?.classList.contains('loading')) };
    });
    if (!now.more) break;
    if (now.loading) pages++;
    if (wallNow() - scrollFrom > scrollCapMs) {
      capped = true;
      const where = await chat.evaluate(() => {
        const t = document.querySelector('.transcript');
        const row = document.querySelector('.older-row');
        return {
          scrollTop: t.scrollTop,
          clientHeight: t.clientHeight,
          row: row?.textContent,
          chunks: document.querySelector('.entries').childElementCount,
        };
      });
      console.error(`the scroll to the top stopped after ${scrollCapMs} ms: ${JSON.stringify(where)}`);
      break;
    }
    await sleep(30);
  }
  const scrolledAt = wallNow();
  await sleep(500);
  const cpuScrolled = await cpuTimes(metrics);
  const heapFile = process.argv.includes('--heap') ? process.argv[process.argv.indexOf('--heap') + 1] : undefined;
  if (heapFile) await writeHeapSnapshot(metrics, `${heapFile}.${Date.now()}.heapsnapshot`);
  if (tracing) {
    const trace = (await page.context().browser().stopTracing()).toString();
    if (saveDir) fs.writeFileSync(path.join(saveDir, `trace-scroll-${Date.now()}.json`), trace);
    console.error(`scrolling:\n${longestTraceEvents(JSON.parse(trace))}`);
    traced.longestTaskCpuScrollingMs = longestTaskCpu(JSON.parse(trace));
  }
  const entries = await chat.evaluate(
    () => document.querySelectorAll('.entries > .entry, .entries .chunk > .entry').length,
  );
  const tasks = await pre.evaluate(() =>
    window.__long.tasks.map((t) => ({ at: window.__long.origin + t.at, ms: t.ms, by: t.by })),
  );
  const longest = (from, to) => Math.max(0, ...tasks.filter((t) => t.at >= from && t.at <= to).map((t) => t.ms));
  const longestPage = (from, to) =>
    Math.max(
      0,
      ...tasks.filter((t) => t.at >= from && t.at <= to && t.by === 'same-origin-descendant').map((t) => t.ms),
    );
  return {
    openFromAnswerMs: drawnAt - sent,
    openFromPickMs: drawnAt - pickedAt,
    answeredFromPickMs: sent - pickedAt,
    longestTaskOpeningMs: longest(pickedAt, scrollFrom),
    longestPageTaskOpeningMs: longestPage(pickedAt, scrollFrom),
    ...opening,
    scrollToTopMs: scrolledAt - scrollFrom,
    threadCpuScrollingMs: cpuScrolled.task - cpuOpened.task,
    longestTaskScrollingMs: longest(scrollFrom, scrolledAt + 500),
    longestPageTaskScrollingMs: longestPage(scrollFrom, scrolledAt + 500),
    pagesSeenLoading: pages,
    entriesDrawn: entries,
    scrollCapped: capped ? 1 : 0,
    ...traced,
  };
}

/** When the daemon sent the resume's claude/newChannel answer, as the relay noted it in `sentLog` (it may come after the end is drawn). */
async function answerSent(sentLog, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const sent = Number(fs.readFileSync(sentLog, 'utf8').trim().split('\n')[0] || NaN);
    if (Number.isFinite(sent)) return sent;
    if (Date.now() > deadline) throw new Error(`the relay noted no claude/newChannel answer in ${sentLog}`);
    await sleep(20);
  }
}

/** Grows the long session of `entries` entries for a sandbox (bench/grow_session.py), with the
 * project's Python (`uv sync` at the root made it, as it made the daemon the bench runs). */
function growSession(box, entries) {
  const root = path.join(VSCODE_DIR, '..', '..');
  const out = execFileSync(
    path.join(root, '.venv', 'bin', 'python'),
    [
      path.join(root, 'bench', 'grow_session.py'),
      '--home',
      box.home,
      '--workspace',
      box.workspace,
      '--entries',
      String(entries),
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return JSON.parse(out.trim().split('\n').at(-1));
}

async function longMain(sizes) {
  const runs = option('--runs', 1);
  const scrollCapMs = option('--scroll-s', 120) * 1000;
  const json = process.argv.includes('--json');
  const say = json ? console.error : console.log;
  const extensions = process.argv.flatMap((a, i) => (process.argv[i - 1] === '--extension' ? [path.resolve(a)] : []));
  if (!extensions.length) extensions.push(VSCODE_DIR);
  const variants = extensions.flatMap((extension) => [
    { extension, name: extension === VSCODE_DIR ? 'this build' : extension, settings: {} },
    ...(process.argv.includes('--whole') && extension === VSCODE_DIR
      ? [{ extension, name: `${extension} pageEntries 0`, settings: { 'claudeSidecar.pageEntries': 0 } }]
      : []),
  ]);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'page-bench-long-'));
  const scenario = path.join(dir, 'scenario.json');
  fs.writeFileSync(scenario, JSON.stringify({ default: [[{ text: 'ok' }]] }));
  const model = await startModel(scenario);
  const results = [];
  try {
    for (const entries of sizes) {
      const box = sandbox(model.url);
      try {
        const grown = growSession(box, entries);
        say(`${grown.entries} entries, ${(grown.bytes / 1e6).toFixed(1)} MB`);
        const sentLog = path.join(box.root, 'resumed.log');
        const [sidecar, ...args] = box.settings['claudeSidecar.daemonCommand'];
        box.settings['claudeSidecar.daemonCommand'] = [process.execPath, RELAY, sentLog, sidecar, ...args];
        box.settings['claudeSidecar.env'].TIMESTAMP_RELAY_MARK = '"pid":';
        for (const variant of variants) {
          const slim = slimCopy(variant.extension);
          let server;
          let page;
          const figures = [];
          try {
            server = await startCodeServer({
              extensionDir: slim,
              workspace: box.workspace,
              settings: { ...box.settings, ...variant.settings },
            });
            page = await openWorkbench(server.url, { webviewSite });
            await page.addInitScript(longInstrument);
            for (let r = 0; r < runs; r++) {
              figures.push(await longRun(page, sentLog, scrollCapMs));
              say(`${grown.entries} entries, ${variant.name}, run ${r + 1}: ${JSON.stringify(figures.at(-1))}`);
            }
          } finally {
            await closeWorkbench(page);
            await server?.stop();
            fs.rmSync(slim, { recursive: true, force: true });
          }
          results.push({ entries: grown.entries, build: variant.name, runs: figures });
        }
      } finally {
        fs.rmSync(box.root, { recursive: true, force: true });
      }
    }
  } finally {
    model.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  if (json) {
    console.log(JSON.stringify({ long: results }));
    return;
  }
  const keys = Object.keys(results[0]?.runs[0] ?? {});
  const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const columns = results.map((r) => `${r.entries} ${r.build}`);
  console.log(
    `\nlong sessions (median of ${runs}):\n${''.padEnd(28)}${columns.map((c) => c.slice(-24).padStart(26)).join('')}`,
  );
  for (const key of keys) {
    const cells = results.map((r) =>
      median(r.runs.map((f) => f[key]))
        .toFixed(0)
        .padStart(26),
    );
    console.log(`${key.padEnd(28)}${cells.join('')}`);
  }
}

async function main() {
  const long = process.argv.indexOf('--long');
  if (long >= 0) {
    await longMain(process.argv[long + 1].split(',').map(Number));
    return;
  }
  const runs = option('--runs', 3);
  const chars = option('--chars', 60_000);
  const json = process.argv.includes('--json');
  const say = json ? console.error : console.log;
  const extensions = process.argv.flatMap((a, i) => (process.argv[i - 1] === '--extension' ? [path.resolve(a)] : []));
  if (!extensions.length) extensions.push(VSCODE_DIR);
  const peer = process.argv.includes('--peer') ? peerExtension() : null;
  if (peer) extensions.push(peer);
  const text = answer(chars);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'page-bench-'));
  const scenario = path.join(dir, 'scenario.json');
  fs.writeFileSync(
    scenario,
    JSON.stringify({
      rules: [{ match: '(?i)long', steps: [[{ text }]] }],
      default: [[{ text: 'ok' }]],
      chunk: 20,
      // --delay-ms N: the stand-in waits N ms before each 20-character delta (a paced stream;
      // default 0, full speed, as issue 43's figures were measured).
      delay: option('--delay-ms', 0) / 1000,
    }),
  );
  const model = await startModel(scenario);
  // --rounds N: the builds take turns N times (each its `runs` runs a turn), so that a phase
  // of the machine's load falls on all of them, not on the one measured then.
  const rounds = option('--rounds', 1);
  const byBuild = new Map(extensions.map((extension) => [extension, []]));
  try {
    for (let round = 0; round < rounds; round++)
      for (const extension of extensions) {
        const box = sandbox(model.url);
        // --cli PATH: the chats run that CLI (a wrapper that changes how the CLI is scheduled, an older one).
        const cli = process.argv.includes('--cli')
          ? path.resolve(process.argv[process.argv.indexOf('--cli') + 1])
          : null;
        if (cli) box.settings['claudeSidecar.env'].CLAUDE_SIDECAR_CLI = cli;
        const sentLog = path.join(box.root, 'turn-ended.log');
        const [sidecar, ...args] = box.settings['claudeSidecar.daemonCommand'];
        box.settings['claudeSidecar.daemonCommand'] = [process.execPath, RELAY, sentLog, sidecar, ...args];
        const slim = slimCopy(extension);
        let server;
        let page;
        const figures = byBuild.get(extension);
        try {
          server = await startCodeServer({ extensionDir: slim, workspace: box.workspace, settings: box.settings });
          page = await openWorkbench(server.url, { webviewSite });
          for (let r = 0; r < runs; r++) {
            figures.push(await oneRun(page, sentLog, process.argv.includes('--profile')));
            say(`${extension} run ${figures.length}: ${JSON.stringify(figures.at(-1))}`);
          }
        } finally {
          await closeWorkbench(page);
          await server?.stop();
          fs.rmSync(slim, { recursive: true, force: true });
          fs.rmSync(box.root, { recursive: true, force: true });
        }
      }
  } finally {
    if (peer) fs.rmSync(peer, { recursive: true, force: true });
    model.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const results = extensions.map((extension) => ({
    extension: extension === peer ? 'peer' : extension,
    runs: byBuild.get(extension),
  }));
  if (json) {
    console.log(
      JSON.stringify({ answerChars: text.length, keyEveryMs: typing ? KEY_EVERY_MS : null, builds: results }),
    );
    return;
  }
  for (const { extension, runs: figures } of results) {
    console.log(`\n${extension} (${figures.length} runs: median [min-max])`);
    for (const key of Object.keys(figures[0] ?? {})) {
      if (typeof figures[0][key] !== 'number') continue;
      const values = figures.map((f) => f[key] ?? NaN).sort((a, b) => a - b);
      const median = values[Math.floor(values.length / 2)];
      console.log(
        `  ${key.padEnd(18)} ${median.toFixed(1).padStart(7)} [${values[0].toFixed(1)}-${values.at(-1).toFixed(1)}]`,
      );
    }
  }
}

try {
  await main();
} catch (e) {
  if (e instanceof PrerequisiteError) exitForPrerequisite(e, 'the page bench in VS Code');
  else throw e;
}
