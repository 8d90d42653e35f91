#!/usr/bin/env node
// The UI run on the shared daemon: the packaged extension in code-server with
// `claudeSidecar.daemon: "shared"`, two browser windows on one chat, the way a person uses
// them: window A starts a chat whose answer is held mid-turn; window B attaches to it
// ("Claude: Attach to a Running Chat"); A reloads mid-turn and finds its chat still running;
// the answer goes on in both; a permission answered in B leaves A's card with "answered in
// another editor"; closing A's tab leaves the chat running (B still has it, Attach lists it).
// A chat of another folder runs in the daemon too: Attach lists this workspace's chats and
// shows the other folder's only when asked.
// Screenshots of each state go to test-artifacts/ui-shared/ (look at them).
//
//   node test/vscode/ui-shared.mjs [--verbose]
// Needs: `npm run package` (dist/claude-sidecar.vsix), the toolchain, `uv sync` at the root.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import jsonrpc from 'vscode-jsonrpc/node';
import { exitForPrerequisite, PrerequisiteError, sleep, VSCODE_DIR } from '../host/common.mjs';
import { closeWorkbench, openWorkbench, runCommand, screenshot, startCodeServer } from '../host/ui.mjs';
import { sandbox, startModel } from './run.mjs';

const VSIX = path.join(VSCODE_DIR, 'dist', 'claude-sidecar.vsix');
const SHOTS = path.join(VSCODE_DIR, 'test-artifacts', 'ui-shared');
const SIDECAR = path.join(VSCODE_DIR, '..', '..', '.venv', 'bin', 'claude-sidecar');
const FIRST_HALF = 'The first half of a long answer,';
const SECOND_HALF = 'and the second half, after the hold.';
const verbose = process.argv.includes('--verbose');
const SCENARIO = JSON.parse(fs.readFileSync(path.join(VSCODE_DIR, 'test', 'scenario.json'), 'utf8'));

/** The chat webview's inner frame showing `text` (VS Code nests each page in two iframes). */
async function chatWith(page, text, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const frame of page.frames()) {
      const found = await frame
        .locator('textarea.prompt')
        .count()
        .catch(() => 0);
      if (
        found &&
        (await frame
          .getByText(text)
          .count()
          .catch(() => 0))
      )
        return frame;
    }
    if (Date.now() > deadline) throw new Error(`no chat shows "${text}"`);
    await sleep(200);
  }
}

/** The frame of a chat with nothing in it yet (a new chat's). */
async function newChat(page, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const frame of page.frames()) {
      if (
        await frame
          .locator('.transcript .empty')
          .isVisible()
          .catch(() => false)
      )
        return frame;
    }
    if (Date.now() > deadline) throw new Error('no new chat shows');
    await sleep(200);
  }
}

async function send(page, chat, text) {
  await chat.locator('textarea.prompt').click();
  await page.keyboard.type(text);
  await page.keyboard.press('Enter');
}

async function step(name, run) {
  const started = Date.now();
  await run();
  console.log(`ok - ${name} (${Date.now() - started} ms)`);
}

/** `claude-sidecar serve` of this run's own on a short socket path; resolves once it answers. */
async function startServe(env, logFile) {
  const dir = fs.mkdtempSync('/tmp/cs-');
  const socket = path.join(dir, 'daemon.sock');
  const log = fs.openSync(logFile, 'a');
  const child = spawn(SIDECAR, ['--log-level', 'DEBUG', 'serve', '--socket', socket, '--warm-pool', '0'], {
    env,
    stdio: ['ignore', log, log],
  });
  fs.closeSync(log);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const answers = () =>
    new Promise((resolve) => {
      const probe = net.createConnection(socket);
      probe.once('connect', () => (probe.destroy(), resolve(true)));
      probe.once('error', () => resolve(false));
    });
  // Polls: the daemon's readiness is not an event this process can await.
  while (!(await answers())) {
    if (child.exitCode !== null) throw new Error(`claude-sidecar serve exited with ${child.exitCode}`);
    await sleep(50);
  }
  return {
    socket,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A chat of another folder, opened in the shared daemon by a client of its own (another
 * window, another editor), which then goes away: the chat keeps running, detached.
 */
async function chatElsewhere(socket, env, cwd) {
  fs.mkdirSync(cwd, { recursive: true });
  const child = spawn(SIDECAR, ['connect', '--socket', socket], { env, stdio: ['pipe', 'pipe', 'ignore'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const rpc = jsonrpc.createMessageConnection(
    new jsonrpc.StreamMessageReader(child.stdout),
    new jsonrpc.StreamMessageWriter(child.stdin),
  );
  rpc.listen();
  try {
    await rpc.sendRequest('initialize', {
      processId: process.pid,
      capabilities: {},
      initializationOptions: { clientName: 'another editor' },
    });
    await rpc.sendNotification('initialized', {});
    await rpc.sendRequest('claude/newChannel', { cwd });
  } finally {
    rpc.dispose();
    child.stdin.end();
    await exited;
  }
}

async function main() {
  if (!fs.existsSync(VSIX)) throw new Error(`${VSIX} is missing: run \`npm run package\` first`);
  fs.rmSync(SHOTS, { recursive: true, force: true });
  const model = await startModel(path.join(VSCODE_DIR, 'test', 'scenario.json'));
  const box = sandbox(model.url);
  const env = { ...process.env, ...box.settings['claudeSidecar.env'] };
  const serve = await startServe(env, path.join(box.root, 'daemon.log'));
  box.settings['claudeSidecar.daemon'] = 'shared';
  box.settings['claudeSidecar.daemonCommand'] = [SIDECAR, 'connect', '--socket', serve.socket];
  let server;
  let a;
  let b;
  try {
    server = await startCodeServer({ extensionVsix: VSIX, workspace: box.workspace, settings: box.settings, verbose });
    a = await openWorkbench(server.url);
    await step('window A: a new chat answers, then an answer is held mid-turn', async () => {
      await runCommand(a, 'Claude: New Chat');
      const chat = await newChat(a);
      await chat.locator('textarea.prompt').waitFor({ state: 'visible' });
      await send(a, chat, 'hello there');
      await chat.getByText('Hello from the stand-in model.').first().waitFor({ timeout: 30_000 });
      await send(a, chat, 'hold on');
      await chat.getByText(FIRST_HALF).first().waitFor({ timeout: 30_000 });
      await screenshot(a, path.join(SHOTS, '1-a-held.png'));
    });
    const elsewhere = path.join(box.root, 'other-project');
    await chatElsewhere(serve.socket, env, elsewhere);
    b = await openWorkbench(server.url);
    await step(
      'window B: "Attach to a Running Chat" lists it (not the other folder\'s chat); the one picked shows its history, then live',
      async () => {
        await runCommand(b, 'Claude: Attach to a Running Chat...');
        const rows = b.locator('.quick-input-widget .monaco-list-row');
        const row = rows.first();
        await row.waitFor({ timeout: 15_000 });
        const label = await row.innerText();
        assert.match(label, /hello there/, 'the chat is listed by its first prompt');
        assert.match(label, /working/);
        assert.match(label, /attached: VS Code · workspace/);
        const labels = (await rows.allInnerTexts()).join(' / ');
        assert.doesNotMatch(labels, /other-project/, "the other folder's chat is left out");
        assert.match(labels, /Show the chats of other folders \(1\)/, 'and offered');
        await screenshot(b, path.join(SHOTS, '2-b-attach-pick.png'));
        await b.keyboard.press('Enter');
        const chat = await chatWith(b, FIRST_HALF);
        await chat.getByText('Attached: the chat goes on from here.').waitFor();
        await chat.getByText('Hello from the stand-in model.').first().waitFor();
        await screenshot(b, path.join(SHOTS, '3-b-attached.png'));
      },
    );
    await step('window A reloads mid-turn and finds its chat still running', async () => {
      await a.reload();
      await a.waitForSelector('.monaco-workbench .part.statusbar', { timeout: 60_000 });
      const chat = await chatWith(a, FIRST_HALF, 60_000);
      await chat.getByText('Claude is working…').waitFor({ timeout: 15_000 });
      await screenshot(a, path.join(SHOTS, '4-a-reloaded.png'));
    });
    await step('the held answer goes on in both windows', async () => {
      await runCommand(b, 'Claude: New Chat');
      const fresh = await newChat(b);
      await send(b, fresh, 'go on');
      const inA = await chatWith(a, SECOND_HALF, 30_000);
      // In B the new chat is a tab in front of the attached one: the user goes back to it.
      await b.locator('.tab', { hasText: 'Claude: hello there' }).first().click();
      const inB = await chatWith(b, SECOND_HALF, 30_000);
      for (const chat of [inA, inB]) {
        const text = await chat.locator('.transcript').innerText();
        assert.equal(text.split(FIRST_HALF).length, 2, 'the first half once');
        assert.equal(text.split(SECOND_HALF).length, 2, 'the second half once');
      }
      await screenshot(a, path.join(SHOTS, '5-a-answered.png'));
    });
    await step('a permission answered in window B leaves window A with "answered in another editor"', async () => {
      const chatA = await chatWith(a, SECOND_HALF);
      await send(a, chatA, 'greet the world');
      await chatA.locator('.permission-card').first().waitFor({ timeout: 30_000 });
      const chatB = await chatWith(b, 'hold on');
      const card = chatB.locator('.permission-card').first();
      await card.waitFor({ timeout: 30_000 });
      await screenshot(b, path.join(SHOTS, '6-b-card.png'));
      await card.getByRole('button', { name: 'Allow', exact: true }).click();
      await chatA.getByText('answered in another editor').first().waitFor({ timeout: 15_000 });
      await chatA.getByText('Greeting changed.').first().waitFor({ timeout: 30_000 });
      assert.equal(await chatA.locator('.permission-card').count(), 0, 'no card left in A');
      await screenshot(a, path.join(SHOTS, '7-a-answered-elsewhere.png'));
    });
    await step('both connections killed mid-stream: the windows say so, reconnect, and miss nothing', async () => {
      const long = SCENARIO.rules.find((r) => r.match === '(?i)long').steps[0][0].text;
      const chatA = await chatWith(a, 'Greeting changed.');
      await send(a, chatA, 'a long story');
      await chatA.getByText('word word word').first().waitFor({ timeout: 30_000 });
      // `connect` refuses a socket directory open to the group: the windows stay away until
      // it is private again, long enough to see them reconnecting.
      fs.chmodSync(path.dirname(serve.socket), 0o770);
      try {
        const bridges = spawnSync('pgrep', ['-f', `connect --socket ${serve.socket}`], { encoding: 'utf8' });
        const pids = bridges.stdout.split('\n').filter(Boolean).map(Number);
        assert.equal(pids.length, 2, 'one connect per window');
        for (const pid of pids) process.kill(pid, 'SIGKILL');
        await chatA.getByText('Reconnecting to the shared daemon').waitFor({ timeout: 15_000 });
        await a.locator('.statusbar-item', { hasText: 'Claude: reconnecting' }).first().waitFor({ timeout: 15_000 });
        await screenshot(a, path.join(SHOTS, '8-a-reconnecting.png'));
      } finally {
        fs.chmodSync(path.dirname(serve.socket), 0o700);
      }
      await chatA.getByText('Reconnected to the shared daemon.').waitFor({ timeout: 30_000 });
      await chatA.locator('.entry.turn').nth(3).waitFor({ timeout: 30_000 });
      const answer = await chatA.locator('.entry.text').last().innerText();
      assert.equal(answer.trim(), long.trim(), 'the long answer exactly, nothing lost or doubled');
      await screenshot(a, path.join(SHOTS, '9-a-reconnected.png'));
    });
    await step('closing the tab in window A leaves the chat running; Attach lists it', async () => {
      await a.locator('.tab.active .tab-actions .action-label').first().click();
      await a.waitForFunction(() => !document.querySelector('.tab.active')?.textContent?.includes('Claude'), null, {
        timeout: 10_000,
      });
      await runCommand(a, 'Claude: Attach to a Running Chat...');
      const rows = a.locator('.quick-input-widget .monaco-list-row');
      await rows.first().waitFor({ timeout: 15_000 });
      const labels = await rows.allInnerTexts();
      assert.ok(
        labels.some((l) => /hello there/.test(l)),
        `the closed tab's chat is listed: ${labels.join(' / ')}`,
      );
      await screenshot(a, path.join(SHOTS, '10-a-closed-tab-listed.png'));
      await rows.filter({ hasText: 'Show the chats of other folders' }).first().click();
      await rows.filter({ hasText: 'other-project' }).first().waitFor({ timeout: 15_000 });
      // A heading is shown in the first row of its group.
      const all = await rows.allInnerTexts();
      const other = all.findIndex((t) => /other-project/.test(t));
      assert.ok(other > 0, `the other folder's chat after this workspace's: ${all.join(' / ')}`);
      assert.match(all[0], /hello there[^]*This workspace/, "this workspace's chats first, under their heading");
      assert.match(all[other], /Other folders/, "the other folder's under its own");
      await screenshot(a, path.join(SHOTS, '11-a-other-folders.png'));
      await a.keyboard.press('Escape');
    });
  } finally {
    await closeWorkbench(a);
    await closeWorkbench(b);
    await server?.stop();
    await serve.stop();
    model.stop();
    fs.rmSync(box.root, { recursive: true, force: true });
  }
}

try {
  await main();
} catch (e) {
  if (e instanceof PrerequisiteError) exitForPrerequisite(e, 'the shared-daemon UI run');
  console.error(e);
  process.exit(1);
}
