#!/usr/bin/env node
// Bench: the VS Code client while N chats stream at once with the Claude Chats view open, in a
// real VS Code (code-server's VS Code server, headless Chromium, the extension-test route).
// test/vscode/chats.bench.ts runs in the extension host: it opens the chats, shows the view,
// sends every chat `paced RATE SECONDS` (the synthetic CLI of bench/synthetic_cli.py, given with
// --cli, streams RATE deltas a second for SECONDS: bench/overview.py's scenario) and measures the
// extension host's event-loop delay and the notifications it handled. Here, in the workbench's
// page (the renderer's main thread, which the chat webviews share), over the same span:
//
// - the longest task ('longtask' entries: tasks of 50 ms or more; 0 when there was none) and
//   how many there were;
// - how late a repeating 10 ms timer fired: max and p95 (the thread was busy that long).
//
// Prints the figures (--json: one JSON object); asserts none of them.
//
//   node test/vscode/chats-bench.mjs --cli PATH [--chats 8] [--rate 200] [--seconds 10] [--no-view] [--json]
// --no-view: the Explorer in the side bar instead of the Chats view (what the view costs).
// Needs `npm run build`, the toolchain (scripts/toolchain.sh) and `uv sync` at the root;
// bench/overview_vscode.py writes the synthetic CLI and runs this.

import fs from 'node:fs';
import path from 'node:path';
import { exitForPrerequisite, PrerequisiteError, VSCODE_DIR } from '../host/common.mjs';
import { runExtensionTests } from '../host/run-extension-tests.mjs';
import { sandbox } from './run.mjs';

function option(name, fallback) {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : fallback;
}

/** Runs in every frame as the workbench starts; measures in the top one (the renderer's main thread). */
function instrument() {
  if (window !== window.top) return;
  const bench = { tasks: [], late: [] };
  window.__chatsBench = bench;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      bench.tasks.push({ at: performance.timeOrigin + e.startTime, ms: e.duration, name: e.name });
    }
  }).observe({ type: 'longtask', buffered: true });
  let expected = performance.now() + 10;
  const tick = () => {
    const now = performance.now();
    bench.late.push([performance.timeOrigin + now, Math.max(0, now - expected)]);
    if (bench.late.length > 200_000) bench.late.splice(0, 100_000);
    expected = now + 10;
    setTimeout(tick, 10);
  };
  setTimeout(tick, 10);
}

function percentile(sorted, p) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] : 0;
}

async function main() {
  const cli = option('--cli');
  if (!cli || !fs.existsSync(cli)) {
    console.error('--cli PATH: the synthetic CLI (bench/overview_vscode.py writes one)');
    process.exit(2);
  }
  const chats = Number(option('--chats', 8));
  const rate = Number(option('--rate', 200));
  const seconds = Number(option('--seconds', 10));
  // No model is asked: the synthetic CLI answers by itself.
  const box = sandbox('http://127.0.0.1:9');
  box.settings['claudeSidecar.cliPath'] = cli;
  let host;
  let page;
  const log = (line) => {
    const m = /BENCH (\{.*\})/.exec(line);
    if (m) host = JSON.parse(m[1]);
    else if (process.argv.includes('--verbose')) console.error(line);
  };
  try {
    const { exitCode } = await runExtensionTests({
      extension: VSCODE_DIR,
      tests: path.join(VSCODE_DIR, 'out', 'test', 'vscode', 'chats.bench.js'),
      workspace: box.workspace,
      settings: box.settings,
      env: {
        SIDECAR_BENCH_CHATS: String(chats),
        SIDECAR_BENCH_RATE: String(rate),
        SIDECAR_BENCH_SECONDS: String(seconds),
        SIDECAR_BENCH_VIEW: process.argv.includes('--no-view') ? '0' : '1',
      },
      timeoutS: seconds + 240,
      log,
      onPage: (p) => p.addInitScript(instrument),
      beforeClose: async (p) => {
        page = await p.evaluate(() => window.__chatsBench);
      },
    });
    if (exitCode !== 0 || !host || !page) {
      console.error(`the bench did not finish (exit code ${exitCode}); run with --verbose to see its log`);
      process.exit(1);
    }
  } finally {
    fs.rmSync(box.root, { recursive: true, force: true });
  }
  const within = (at) => at >= host.startedAt && at <= host.endedAt;
  const tasks = page.tasks.filter((t) => within(t.at));
  const late = page.late
    .filter(([at]) => within(at))
    .map(([, ms]) => ms)
    .sort((a, b) => a - b);
  const figures = {
    ...host,
    pageLongestTaskMs: Math.round(Math.max(0, ...tasks.map((t) => t.ms))),
    // Whose the long tasks were: 'self' (the workbench's own), or a frame in it (the chat's webview).
    pageLongestWorkbenchTaskMs: Math.round(Math.max(0, ...tasks.filter((t) => t.name === 'self').map((t) => t.ms))),
    pageLongestFrameTaskMs: Math.round(Math.max(0, ...tasks.filter((t) => t.name !== 'self').map((t) => t.ms))),
    pageLongTasks: tasks.length,
    pageTimerLateMaxMs: Math.round(late.at(-1) ?? 0),
    pageTimerLateP95Ms: Math.round(percentile(late, 95)),
  };
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify(figures));
    return;
  }
  console.log(
    [
      `VS Code, ${chats} chats streaming ${rate} deltas/s for ${seconds} s, ` +
        `${figures.withView ? 'the Claude Chats view open' : 'the Explorer in the side bar'} ` +
        `(${figures.spanS.toFixed(1)} s from the sends to the last turn's end):`,
      `  extension host: a 10 ms timer late by max ${figures.hostLagMaxMs} ms, p95 ${figures.hostLagP95Ms} ms, ` +
        `p50 ${figures.hostLagP50Ms} ms; ${figures.notifications} notifications handled ` +
        `(${figures.notificationsPerS}/s, ${figures.deltas} claude/delta), ${figures.channelsChanged} ` +
        `claude/channelsChanged, the Chats view redrawn ${figures.treeRedraws} times`,
      `  page (renderer main thread): longest task ${figures.pageLongestTaskMs} ms (${figures.pageLongTasks} of 50 ms ` +
        `or more; the workbench's longest ${figures.pageLongestWorkbenchTaskMs} ms, the chat page's ` +
        `${figures.pageLongestFrameTaskMs} ms), a 10 ms timer late by max ${figures.pageTimerLateMaxMs} ms, p95 ${figures.pageTimerLateP95Ms} ms`,
    ].join('\n'),
  );
}

try {
  await main();
} catch (e) {
  if (e instanceof PrerequisiteError) exitForPrerequisite(e, 'the Chats bench in VS Code');
  else throw e;
}
