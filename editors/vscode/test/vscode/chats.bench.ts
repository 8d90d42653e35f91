// Bench, run inside a real VS Code by test/vscode/chats-bench.mjs (the extension-test route):
// does the extension host keep up while N chats stream at once with the Claude Chats view open?
// N chats are opened with "Claude: New Chat" (N tabs of one group, the last one in front), the
// Chats view is shown, then each chat is sent `paced RATE SECONDS` at once (the synthetic CLI of
// bench/synthetic_cli.py streams RATE deltas a second for SECONDS, as bench/overview.py's
// chats do), until every turn has ended. Measured in the extension host over that span:
//
// - the event loop's lag: how late a repeating 10 ms timer fired (max, p95, p50), as the page
//   is measured (perf_hooks' monitorEventLoopDelay counts the timer's own 10 ms in);
// - the notifications it handled: every chat's (claude/delta, status, entries...), the Chats
//   view's claude/channelsChanged, and how often the view's tree was told to redraw;
//
// and printed as one line `BENCH {json}` with the span's wall-clock start and end, which the
// runner uses to cut out what the page measured. Sizes come from the environment:
// SIDECAR_BENCH_CHATS (8), SIDECAR_BENCH_RATE (200), SIDECAR_BENCH_SECONDS (10);
// SIDECAR_BENCH_VIEW=0 shows the Explorer instead of the Chats view (what the view costs).

import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { ChatPanel } from '../../src/extension/chat-panel';
import type { ChatsView } from '../../src/extension/chats-view';
import type { SidecarClient } from '../../src/core/client';

type Api = {
  extension: {
    activePanel(): ChatPanel | undefined;
    readonly client: SidecarClient;
    chatsView: ChatsView | undefined;
  };
};

const size = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

async function until(probe: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The entry the extension host calls (extensionTestsPath). */
export async function run(): Promise<void> {
  const chats = size('SIDECAR_BENCH_CHATS', 8);
  const rate = size('SIDECAR_BENCH_RATE', 200);
  const seconds = size('SIDECAR_BENCH_SECONDS', 10);
  const ext = vscode.extensions.getExtension<Api>('claude-sidecar.claude-sidecar');
  assert.ok(ext, 'the extension is installed');
  const { extension } = await ext.activate();
  const view = extension.chatsView;
  assert.ok(view, 'the Claude Chats view is made at activation');

  const panels: ChatPanel[] = [];
  for (let i = 0; i < chats; i++) {
    await vscode.commands.executeCommand('claudeSidecar.newChat');
    const panel = extension.activePanel();
    assert.ok(panel && !panels.includes(panel), 'New Chat opened a chat tab');
    panels.push(panel);
  }
  await vscode.commands.executeCommand('claudeSidecar.chats.focus');
  await until(() => view.getChildren().length === chats, `the Chats view lists the ${chats} chats`);
  const withView = process.env.SIDECAR_BENCH_VIEW !== '0';
  if (!withView) await vscode.commands.executeCommand('workbench.view.explorer');

  let notifications = 0;
  let deltas = 0;
  let overview = 0;
  let treeRedraws = 0;
  let ended = 0;
  const subs = [
    ...panels.map((p) =>
      p.chat.onEvent((e) => {
        if (e.kind !== 'notification') return;
        notifications++;
        if (e.method === 'claude/delta') deltas++;
        if (e.method === 'claude/turnEnded') ended++;
      }),
    ),
    extension.client.onChannelsChanged(() => overview++),
    view.onDidChangeTreeData(() => treeRedraws++),
  ];
  // The event loop's lag: how late each 10 ms timer fires.
  const late: number[] = [];
  let expected = performance.now() + 10;
  let ticking = true;
  const tick = () => {
    const now = performance.now();
    late.push(Math.max(0, now - expected));
    expected = now + 10;
    if (ticking) setTimeout(tick, 10);
  };
  setTimeout(tick, 10);
  const startedAt = Date.now();
  // Every prompt at once, as fast as the chats take them (the pages' part played by ChatPanel.handle).
  await Promise.all(panels.map((p) => p.handle('send', { text: `paced ${rate} ${seconds}` })));
  await until(() => ended >= chats, 'every turn ended', (seconds + 120) * 1000);
  ticking = false;
  const endedAt = Date.now();
  for (const s of subs) s.dispose();
  const spanS = (endedAt - startedAt) / 1000;
  late.sort((a, b) => a - b);
  const at = (p: number) => Math.round(late[Math.min(late.length - 1, Math.floor((late.length * p) / 100))] ?? 0);
  const figures = {
    chats,
    rate,
    seconds,
    withView,
    startedAt,
    endedAt,
    spanS,
    hostLagMaxMs: Math.round(late.at(-1) ?? 0),
    hostLagP95Ms: at(95),
    hostLagP50Ms: at(50),
    notifications,
    notificationsPerS: Math.round(notifications / spanS),
    deltas,
    channelsChanged: overview,
    treeRedraws,
    listed: view.getChildren().length,
  };
  console.log(`BENCH ${JSON.stringify(figures)}`);
  for (const p of panels) p.panel.dispose();
}
