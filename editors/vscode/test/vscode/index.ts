// Extension tests, run inside a real VS Code (code-server's VS Code server) by
// test/host/run-extension-tests.mjs: the extension as installed, its daemon, the real CLI
// and the stand-in model. test/vscode/run.mjs prepares the workspace and the settings.
//
// The page's part is played by calling ChatPanel.handle (what the webview's requests do);
// the page itself is tested in Chromium (test/webview) and in the UI run (test/vscode/ui.mjs).

import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import * as vscode from 'vscode';
import type { ChatEvent } from '../../src/core/chat-state';
import type { Chat } from '../../src/core/chat';
import type { SidecarClient } from '../../src/core/client';
import { VIEW_TYPE, type ChatPanel, type RestorableState } from '../../src/extension/chat-panel';
import type { ChatsView } from '../../src/extension/chats-view';
import type { ChannelSummary } from '../../src/core/protocol.generated';

type Api = {
  extension: {
    /** The value of the context key claudeSidecar.chatFocused the extension set last. */
    chatFocused: boolean;
    activePanel(): ChatPanel | undefined;
    readonly client: SidecarClient;
    chatsView: ChatsView | undefined;
    show(chat: Chat): ChatPanel;
    openSession(cwd: string, sessionId: string): Promise<void>;
    restore(panel: vscode.WebviewPanel, state: RestorableState & { sessionId: string; cwd: string }): Promise<void>;
  };
};

const tests: { name: string; run: () => Promise<void> }[] = [];
function test(name: string, run: () => Promise<void>): void {
  tests.push({ name, run });
}

function workspace(): string {
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder) throw new Error('the tests need a workspace folder');
  return folder.uri.fsPath;
}

async function api(): Promise<Api> {
  const ext = vscode.extensions.getExtension<Api>('claude-sidecar.claude-sidecar');
  assert.ok(ext, 'the extension is installed');
  return ext.activate();
}

/** Waits for the chat's next event matching `test` (from now). */
function next(panel: ChatPanel, match: (e: ChatEvent) => boolean, timeoutMs = 60_000): Promise<ChatEvent> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sub.dispose();
      reject(new Error(`timed out waiting for a chat event (${timeoutMs} ms)`));
    }, timeoutMs);
    const sub = panel.chat.onEvent((e) => {
      if (!match(e)) return;
      clearTimeout(timer);
      sub.dispose();
      resolve(e);
    });
  });
}

const isNote = (method: string) => (e: ChatEvent) => e.kind === 'notification' && e.method === method;

/** The result texts of the tool uses the events reported. */
function toolResults(events: ChatEvent[]): string[] {
  return events.flatMap((e) =>
    e.kind === 'notification' && e.method === 'claude/entry' && e.params.entry.kind === 'tool'
      ? [e.params.entry.result?.text ?? '']
      : [],
  );
}

async function newChatPanel(): Promise<ChatPanel> {
  const { extension } = await api();
  await vscode.commands.executeCommand('claudeSidecar.newChat');
  const panel = extension.activePanel();
  assert.ok(panel, 'claudeSidecar.newChat opened a chat panel');
  return panel;
}

async function turn(panel: ChatPanel, text: string): Promise<ChatEvent[]> {
  const seen: ChatEvent[] = [];
  const sub = panel.chat.onEvent((e) => seen.push(e));
  const ended = next(panel, isNote('claude/turnEnded'));
  await panel.handle('send', { text });
  await ended;
  sub.dispose();
  return seen;
}

function activeDiffTab(): vscode.TabInputTextDiff | undefined {
  const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
  return input instanceof vscode.TabInputTextDiff ? input : undefined;
}

async function until<T>(probe: () => T | undefined, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('New Chat opens a chat tab whose answer streams in', async () => {
  const panel = await newChatPanel();
  const events = await turn(panel, 'hello there');
  const text = events.flatMap((e) =>
    e.kind === 'notification' && e.method === 'claude/delta' && e.params.kind === 'text' ? [e.params.text] : [],
  );
  assert.equal(text.join(''), 'Hello from the stand-in model.');
  assert.match(panel.panel.title, /hello there/);
  panel.panel.dispose();
});

test('a pending edit opens in the diff editor; once allowed, its change does too', async () => {
  const panel = await newChatPanel();
  const asked = next(panel, isNote('claude/permissionRequest'));
  await panel.handle('send', { text: 'greet the world' });
  const ask = await asked;
  assert.ok(ask.kind === 'notification' && ask.method === 'claude/permissionRequest');
  await panel.handle('reviewPermission', { requestId: ask.params.requestId });
  const review = await until(activeDiffTab, 'the proposed edit opens in a diff editor');
  assert.equal(review.original.fsPath, path.join(workspace(), 'hello.py'));
  const proposed = await vscode.workspace.openTextDocument(review.modified);
  assert.equal(proposed.getText(), "print('hello, world')\n");

  const updated = next(panel, isNote('claude/fileUpdated'));
  const ended = next(panel, isNote('claude/turnEnded'));
  await panel.handle('respondPermission', { requestId: ask.params.requestId, decision: 'allow' });
  const update = await updated;
  await ended;
  const showsProposal = () =>
    vscode.window.tabGroups.all.some((g) =>
      g.tabs.some(
        (t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.toString() === review.modified.toString(),
      ),
    );
  await until(() => (showsProposal() ? undefined : true), "the proposal's diff editor closes once it is decided");
  assert.ok(update.kind === 'notification' && update.method === 'claude/fileUpdated');
  assert.equal(fs.readFileSync(path.join(workspace(), 'hello.py'), 'utf8'), "print('hello, world')\n");
  await panel.handle('openFileDiff', { seq: update.params.seq });
  const change = await until(
    () => (activeDiffTab()?.modified.path.includes('/after/') ? activeDiffTab() : undefined),
    'the change opens in a diff editor',
  );
  const before = await vscode.workspace.openTextDocument(change.original);
  assert.equal(before.getText(), "print('hello')\n");
  panel.panel.dispose();
});

test("the model's getSelection is answered with the active editor's selection", async () => {
  const file = path.join(workspace(), 'notes.txt');
  fs.writeFileSync(file, 'first line\nthe selected words\nlast line\n');
  const editor = await vscode.window.showTextDocument(vscode.Uri.file(file));
  editor.selection = new vscode.Selection(1, 4, 1, 18);
  const panel = await newChatPanel();
  const events = await turn(panel, 'look at my selection');
  assert.ok(
    toolResults(events).some((r) => r.includes('selected words')),
    'the tool result carries the selection',
  );
  panel.panel.dispose();
});

test('files are completed from the workspace after @', async () => {
  fs.mkdirSync(path.join(workspace(), 'src'), { recursive: true });
  fs.writeFileSync(path.join(workspace(), 'src', 'app.py'), 'x = 1\n');
  const panel = await newChatPanel();
  const { paths } = await panel.handle('completeFiles', { query: 'app' });
  assert.deepEqual(paths, [path.join('src', 'app.py')]);
  panel.panel.dispose();
});

test("the model's getDiagnostics sees the problems VS Code shows", async () => {
  const file = path.join(workspace(), 'hello.py');
  const problems = vscode.languages.createDiagnosticCollection('sidecar-test');
  problems.set(vscode.Uri.file(file), [
    new vscode.Diagnostic(new vscode.Range(0, 0, 0, 5), 'undefined name prnt', vscode.DiagnosticSeverity.Error),
  ]);
  try {
    const panel = await newChatPanel();
    const events = await turn(panel, 'what are the problems');
    assert.ok(
      toolResults(events).some((r) => r.includes('undefined name prnt') && r.includes('hello.py')),
      'the tool result lists the diagnostic with its file',
    );
    panel.panel.dispose();
  } finally {
    problems.dispose();
  }
});

test("the model's openFile shows the file in an editor", async () => {
  const panel = await newChatPanel();
  await turn(panel, 'show me the file');
  const opened = await until(
    () => vscode.window.visibleTextEditors.find((e) => e.document.uri.fsPath === path.join(workspace(), 'hello.py')),
    'hello.py is shown',
  );
  assert.ok(opened);
  panel.panel.dispose();
});

test('Fork from a message opens the fork in a second chat tab', async () => {
  const { extension } = await api();
  const panel = await newChatPanel();
  await turn(panel, 'hello one');
  await turn(panel, 'hello two');
  await panel.handle('fork', { messageId: panel.chat.prompts[0]!.messageId });
  const fork = extension.activePanel();
  assert.ok(fork && fork !== panel, 'the fork opens in its own tab, the active chat at once');
  assert.deepEqual(
    fork.chat.prompts.map((p) => p.text),
    ['hello one'],
  );
  assert.notEqual(fork.chat.sessionId, panel.chat.sessionId);
  fork.panel.dispose();
  panel.panel.dispose();
});

test('Rewind to a message restores the files its turn changed', async () => {
  const file = path.join(workspace(), 'hello.py');
  fs.writeFileSync(file, "print('hello')\n");
  const panel = await newChatPanel();
  const asked = next(panel, isNote('claude/permissionRequest'));
  const ended = next(panel, isNote('claude/turnEnded'));
  const { messageId } = await panel.handle('send', { text: 'greet the world' });
  const ask = await asked;
  assert.ok(ask.kind === 'notification' && ask.method === 'claude/permissionRequest');
  await panel.handle('respondPermission', { requestId: ask.params.requestId, decision: 'allow' });
  await ended;
  const dry = await panel.handle('rewind', { messageId, dryRun: true });
  assert.deepEqual(dry.filesChanged, [file]);
  await panel.handle('rewind', { messageId, dryRun: false });
  assert.equal(fs.readFileSync(file, 'utf8'), "print('hello')\n");
  panel.panel.dispose();
});

test('the Interrupt command stops the running turn', async () => {
  const panel = await newChatPanel();
  const streaming = next(panel, (e) => e.kind === 'notification' && e.method === 'claude/delta');
  const ended = next(panel, isNote('claude/turnEnded'));
  await panel.handle('send', { text: 'tell me something long' });
  await streaming;
  await vscode.commands.executeCommand('claudeSidecar.interrupt');
  const end = await ended;
  assert.ok(end.kind === 'notification' && end.method === 'claude/turnEnded');
  assert.equal(end.params.outcome, 'interrupted');
  panel.panel.dispose();
});

test('the Fork command opens the whole conversation in a new chat tab', async () => {
  const { extension } = await api();
  const panel = await newChatPanel();
  await turn(panel, 'hello before the fork');
  await vscode.commands.executeCommand('claudeSidecar.fork');
  const fork = extension.activePanel();
  assert.ok(fork && fork !== panel, 'the fork is the active chat at once');
  assert.deepEqual(
    fork.chat.prompts.map((p) => p.text),
    ['hello before the fork'],
  );
  fork.panel.dispose();
  panel.panel.dispose();
});

test('new chats take their model and permission mode from the settings', async () => {
  const config = vscode.workspace.getConfiguration('claudeSidecar');
  await config.update('permissionMode', 'acceptEdits', vscode.ConfigurationTarget.Workspace);
  await config.update('model', 'claude-sonnet-4-5', vscode.ConfigurationTarget.Workspace);
  try {
    const panel = await newChatPanel();
    const events = await turn(panel, 'write the notes');
    assert.equal(panel.chat.status?.permissionMode, 'acceptEdits');
    assert.equal(panel.chat.status.model, 'claude-sonnet-4-5');
    assert.ok(!events.some(isNote('claude/permissionRequest')), 'acceptEdits runs the edit without asking');

    assert.equal(fs.readFileSync(path.join(workspace(), 'notes.md'), 'utf8'), '# Notes\nfirst line\n');
    panel.panel.dispose();
  } finally {
    await config.update('permissionMode', undefined, vscode.ConfigurationTarget.Workspace);
    await config.update('model', undefined, vscode.ConfigurationTarget.Workspace);
  }
});

test('a new chat tab is the active chat at once: a command run right after acts on it', async () => {
  const { extension } = await api();
  const first = await newChatPanel();
  await turn(first, 'hello there');
  // VS Code counts a new panel active at once but tells of the old one's change later: both
  // say they are active until then. No wait here: what a keybinding run at once would see.
  await vscode.commands.executeCommand('claudeSidecar.newChat');
  const second = extension.activePanel();
  assert.ok(second && second !== first, 'the new tab is the active chat');
  await vscode.commands.executeCommand('claudeSidecar.closeChat');
  assert.equal(second.chat.closed, true, 'Close Chat closed the new chat');
  assert.equal(first.chat.closed, false, 'and not the one shown before it');
  // Focus that moves back (the user clicks the first tab) makes it the active chat again.
  first.panel.reveal();
  await until(() => extension.activePanel() === first || undefined, 'the first chat, focused again, is active');
  first.panel.dispose();
});

test("a reloaded chat comes back in its own permission mode, not the setting's", async () => {
  const { extension } = await api();
  const before = await newChatPanel();
  await turn(before, 'hello there');
  await before.handle('setPermissionMode', { mode: 'plan' });
  const { sessionId, cwd } = before.chat;
  assert.ok(sessionId);
  // What a reload does: the panels and the daemon go; the new window gets the panel back with
  // the state its page saved (the page's part is tested in test/webview and the UI run).
  await vscode.commands.executeCommand('claudeSidecar.restartDaemon');
  const restored = vscode.window.createWebviewPanel(VIEW_TYPE, 'Claude', vscode.ViewColumn.Beside, {
    enableScripts: true,
  });
  await extension.restore(restored, { sessionId, cwd, permissionMode: 'plan' });
  const after = extension.activePanel();
  assert.ok(after && after.panel === restored, 'the restored panel shows the chat');
  assert.equal(after.chat.info?.permissionMode, 'plan', 'the resumed channel runs in plan mode');
  await turn(after, 'hello again');
  assert.equal(after.chat.status?.permissionMode, 'plan', 'and keeps running in it');
  after.panel.dispose();
});

test('claudeSidecar.chatFocused (the chat keybindings) follows the focus, not the chat tabs that exist', async () => {
  const { extension } = await api();
  const panel = await newChatPanel();
  await until(() => extension.chatFocused || undefined, 'the new chat has the focus');
  // A chat tab stays open beside it: Ctrl+Alt+Backspace typed in the file is the editor's.
  await vscode.window.showTextDocument(vscode.Uri.file(path.join(workspace(), 'hello.py')), {
    viewColumn: vscode.ViewColumn.One,
  });
  await until(() => !extension.chatFocused || undefined, 'a text editor has the focus');
  panel.reveal();
  await until(() => extension.chatFocused || undefined, 'the chat has the focus again');
  // The page's own focus (the tab stays the active editor while the user is in the terminal)
  // is not tested here: under Playwright's focus emulation every frame says it has the focus.
  panel.panel.dispose();
  assert.equal(extension.chatFocused, false, 'no chat, no chat keybindings');
});

test("a chat tab that opens while one of the extension's input boxes is open leaves the keyboard in the box", async () => {
  const { extension } = await api();
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  const file = vscode.Uri.file(path.join(workspace(), 'hello.py'));
  await vscode.window.showTextDocument(file, { viewColumn: vscode.ViewColumn.One });
  // The user asks for a second New Chat in Worktree… and is typing its task when the first
  // chat's tab opens: the box stays open (answered only at the end of the test).
  const window = vscode.window as unknown as { showInputBox: typeof vscode.window.showInputBox };
  const saved = window.showInputBox;
  let answer: (text: string | undefined) => void = () => undefined;
  let asked = false;
  window.showInputBox = () => {
    asked = true;
    return new Promise<string | undefined>((resolve) => (answer = resolve));
  };
  let panel: ChatPanel | undefined;
  try {
    const second = vscode.commands.executeCommand('claudeSidecar.newChatInWorktree');
    await until(() => asked || undefined, 'the input box of the second New Chat in Worktree… shows');
    await vscode.commands.executeCommand('claudeSidecar.newChat');
    panel = extension.activePanel();
    assert.ok(panel, 'the chat opened');
    const opened = panel;
    await until(() => (opened.panel.visible && !opened.panel.active) || undefined, 'the chat tab in sight, not active');
    await until(
      () => (vscode.window.activeTextEditor?.document.uri.fsPath === file.fsPath ? true : undefined),
      'the file the box was opened over is still the active editor',
    );
    assert.equal(extension.chatFocused, false, 'the chat keybindings are not on: the keyboard is not in the chat');
    answer(undefined);
    await second;
  } finally {
    window.showInputBox = saved;
    answer(undefined);
    panel?.panel.dispose();
  }
});

test('a reload brings the chat tabs back without bringing each to the front: the active one stays', async () => {
  const { extension } = await api();
  const first = await newChatPanel();
  await turn(first, 'hello one');
  const second = await newChatPanel();
  await turn(second, 'hello two');
  const saved = [first, second].map((p) => {
    assert.ok(p.chat.sessionId);
    return { sessionId: p.chat.sessionId, cwd: p.chat.cwd };
  });
  await vscode.commands.executeCommand('claudeSidecar.restartDaemon');
  // The reloaded window's tabs, in one group, the second one active (where the user was).
  const tabs = saved.map(() =>
    vscode.window.createWebviewPanel(VIEW_TYPE, 'Claude', vscode.ViewColumn.Two, { enableScripts: true }),
  );
  const [one, two] = tabs as [vscode.WebviewPanel, vscode.WebviewPanel];
  await until(() => (two.active && !one.active) || undefined, 'the second tab is the active one');
  // VS Code revives them in its own order: here the active one first, then the one behind it.
  await extension.restore(two, saved[1]!);
  await extension.restore(one, saved[0]!);
  assert.equal(extension.activePanel()?.panel, two, 'the chat commands act on the tab in front');
  assert.match(two.title, /hello two/);
  await until(
    () => vscode.window.tabGroups.activeTabGroup.activeTab?.label === two.title || undefined,
    'the tab the user had active is in front',
  );
  assert.equal(two.active, true);
  assert.equal(one.active, false, 'the other tab came back behind it');
  // Going to the other tab makes it the chat the commands act on.
  one.reveal();
  await until(() => extension.activePanel()?.panel === one || undefined, 'the tab the user went to is the active chat');
  one.dispose();
  two.dispose();
});

test('a session picked from the list that a chat tab of the window has shows that tab, not a second one', async () => {
  const { extension } = await api();
  const first = await newChatPanel();
  await turn(first, 'hello one');
  const second = await newChatPanel();
  const chatTabs = () =>
    vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.input instanceof vscode.TabInputWebview).length;
  await until(() => chatTabs() === 2 || undefined, 'two chat tabs');
  const { cwd, sessionId } = first.chat;
  assert.ok(sessionId);
  await extension.openSession(cwd, sessionId);
  assert.equal(extension.activePanel(), first, 'the chat that has the session is the active chat');
  assert.equal(chatTabs(), 2, 'no second tab on the same chat');
  second.panel.dispose();
  first.panel.dispose();
});

/** The repository's root (the folder with pyproject.toml), above this test's bundle. */
function repoRoot(): string {
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'pyproject.toml'))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`no pyproject.toml above ${__dirname}`);
    dir = up;
  }
  return dir;
}

test("a resumed session's tab opens on its stored last page while its CLI starts, and is the chat's tab once open", async () => {
  const { extension } = await api();
  const first = await newChatPanel();
  await turn(first, 'hello there');
  const { cwd, sessionId } = first.chat;
  assert.ok(sessionId);
  first.panel.dispose();
  const config = vscode.workspace.getConfiguration('claudeSidecar');
  const env = config.get<Record<string, string>>('env', {});
  const root = repoRoot();
  // The daemon's CLI held while it resumes (tests/fixtures/held-cli.sh) until the file `go` exists.
  const cli = execFileSync(
    path.join(root, '.venv', 'bin', 'python'),
    ['-c', 'from claude_sidecar.cli.discovery import find_cli; print(find_cli())'],
    { env: { PATH: process.env.PATH ?? '', HOME: env.HOME ?? '' }, encoding: 'utf8' },
  ).trim();
  const go = path.join(env.HOME ?? root, `go-${Date.now()}`);
  const held = {
    ...env,
    CLAUDE_SIDECAR_CLI: path.join(root, 'tests', 'fixtures', 'held-cli.sh'),
    CLAUDE_SIDECAR_HELD_CLI: cli,
    CLAUDE_SIDECAR_HOLD: go,
  };
  await config.update('env', held, vscode.ConfigurationTarget.Global);
  try {
    await vscode.commands.executeCommand('claudeSidecar.restartDaemon');
    const resumed = extension.openSession(cwd, sessionId);
    const early = await until(() => {
      const panel = extension.activePanel();
      return panel && panel !== first && panel.chat.state.entries.length ? panel : undefined;
    }, 'a chat tab on the stored page');
    assert.equal(early.chat.channelId, undefined, 'shown before its channel is open');
    assert.equal(early.chat.state.status.state, 'starting');
    assert.ok(early.chat.state.entries.some((e) => e.kind === 'prompt' && e.text === 'hello there'));
    fs.writeFileSync(go, '');
    await resumed;
    assert.ok(early.chat.channelId, 'open once the CLI started');
    assert.equal(extension.activePanel(), early, 'the same tab');
    const chatTabs = vscode.window.tabGroups.all
      .flatMap((g) => g.tabs)
      .filter((t) => t.input instanceof vscode.TabInputWebview).length;
    assert.equal(chatTabs, 1, 'no second tab');
    early.panel.dispose();
  } finally {
    fs.writeFileSync(go, '');
    await config.update('env', env, vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('claudeSidecar.restartDaemon');
  }
});

test('a new chat opens beside the file in front, and beside the chat in front as a tab of its group', async () => {
  await vscode.window.showTextDocument(vscode.Uri.file(path.join(workspace(), 'hello.py')), {
    viewColumn: vscode.ViewColumn.One,
  });
  // A panel learns its column from the window a moment after it opens.
  const column = (panel: ChatPanel) => until(() => panel.panel.viewColumn, 'the chat tab has its column');
  const first = await newChatPanel();
  assert.equal(await column(first), vscode.ViewColumn.Two, 'beside the file');
  const second = await newChatPanel();
  assert.equal(await column(second), vscode.ViewColumn.Two, 'in the group of the chat that was in front');
  assert.equal(vscode.window.tabGroups.all.length, 2, 'no third column');
  second.panel.dispose();
  first.panel.dispose();
});

test('closing the chat tab ends its CLI', async () => {
  const panel = await newChatPanel();
  const pid = panel.chat.pid;
  assert.ok(pid, 'the chat has a CLI process');
  panel.panel.dispose();
  await until(() => {
    try {
      process.kill(pid, 0);
      return undefined;
    } catch {
      return true;
    }
  }, `CLI ${pid} ends`);
});

/** Starts `claude-sidecar serve` (the daemon of the settings' command) on a socket of its own. */
async function startServe(): Promise<{ socket: string; stop: () => Promise<void> }> {
  const config = vscode.workspace.getConfiguration('claudeSidecar');
  const [sidecar] = config.get<string[]>('daemonCommand', []);
  assert.ok(sidecar, 'the settings name the daemon');
  const dir = fs.mkdtempSync('/tmp/cs-');
  const socket = path.join(dir, 'daemon.sock');
  const child = spawn(sidecar, ['serve', '--socket', socket, '--warm-pool', '0'], {
    env: { ...process.env, ...config.get<Record<string, string>>('env', {}) },
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const answers = () =>
    new Promise<boolean>((resolve) => {
      const probe = net.createConnection(socket);
      probe.once('connect', () => {
        probe.destroy();
        resolve(true);
      });
      probe.once('error', () => resolve(false));
    });
  // Polls: the daemon's readiness is not an event this process can await.
  while (!(await answers())) {
    assert.equal(child.exitCode, null, 'claude-sidecar serve runs');
    await new Promise((r) => setTimeout(r, 50));
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

test("shared daemon: a reloaded window's chat tab attaches to its chat, still running", async () => {
  const config = vscode.workspace.getConfiguration('claudeSidecar');
  const command = config.get<string[]>('daemonCommand', []);
  const serve = await startServe();
  const { extension } = await api();
  try {
    await config.update('daemon', 'shared', vscode.ConfigurationTarget.Global);
    await config.update(
      'daemonCommand',
      [command[0], 'connect', '--socket', serve.socket],
      vscode.ConfigurationTarget.Global,
    );
    await vscode.commands.executeCommand('claudeSidecar.restartDaemon');
    const before = await newChatPanel();
    await turn(before, 'hello there');
    await before.handle('send', { text: 'hold on' });
    const shown = (panel: ChatPanel) =>
      panel.chat.state.entries.some((e) => e.kind === 'text' && e.text.includes('first half'));
    await until(() => shown(before), 'the first half of the held answer', 30_000);
    const { channelId, sessionId, cwd } = before.chat;
    assert.ok(channelId && sessionId);

    // What a reload does to the window: its panels and its connection go (the chat runs on
    // in the daemon); the new window gets a panel back with the state the page saved.
    await vscode.commands.executeCommand('claudeSidecar.restartDaemon');
    assert.equal(before.chat.closed, true);
    const restored = vscode.window.createWebviewPanel(VIEW_TYPE, 'Claude', vscode.ViewColumn.Beside, {
      enableScripts: true,
    });
    await extension.restore(restored, { sessionId, cwd });
    const after = extension.activePanel();
    assert.ok(after && after.panel === restored, 'the restored panel shows the chat');
    assert.equal(after.chat.channelId, channelId, 'the running chat, not a new one');
    assert.equal(after.chat.state.status.state, 'running');
    const ended = next(after, isNote('claude/turnEnded'));
    await vscode.commands.executeCommand('claudeSidecar.newChat');
    const other = extension.activePanel();
    assert.ok(other && other !== after, 'the new chat tab is the active chat at once');
    await other.handle('send', { text: 'go on' });
    await ended;

    const texts = after.chat.state.entries.flatMap((e) => (e.kind === 'text' ? [e.text] : []));
    assert.deepEqual(texts, [
      'Hello from the stand-in model.',
      'The first half of a long answer, ',
      'and the second half, after the hold.',
    ]);
    const notices = after.chat.state.entries.flatMap((e) => (e.kind === 'notice' ? [e.text] : []));
    assert.deepEqual(notices, ['Attached: the chat goes on from here.']);
  } finally {
    await config.update('daemon', undefined, vscode.ConfigurationTarget.Global);
    await config.update('daemonCommand', command, vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('claudeSidecar.restartDaemon');
    await serve.stop();
  }
});

/**
 * A git repository of its own (one commit of hello.py, on main), for chats in worktrees. Its
 * own config holds the committer a merge uses (the sandbox's HOME has no git config), unless
 * `identity` is false: then it asks for one (user.useConfigOnly) and has none.
 */
function gitRepository(identity = true): string {
  const repo = fs.mkdtempSync(path.join(path.dirname(workspace()), 'repo-'));
  fs.writeFileSync(path.join(repo, 'hello.py'), "print('hello')\n");
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: repo });
  git('init', '-q', '-b', 'main');
  git('add', '.');
  git('commit', '-q', '-m', 'hello');
  if (identity) {
    git('config', 'user.name', 'Repo Owner');
    git('config', 'user.email', 'owner@example.com');
  } else {
    git('config', 'user.useConfigOnly', 'true');
  }
  return repo;
}

/** `git args` in `cwd`, its output trimmed. */
function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
}

test('Claude Chats: a worktree chat waiting for a permission is counted on the badge; its changes open in the multi-file diff editor', async () => {
  const { extension } = await api();
  const view = extension.chatsView;
  assert.ok(view, 'the Claude Chats view is made at activation');
  await vscode.commands.executeCommand('claudeSidecar.chats.focus');
  const chat = await extension.client.openChat({ cwd: gitRepository(), worktree: { name: 'greet' } });
  const panel = extension.show(chat);
  const asked = next(panel, isNote('claude/permissionRequest'));
  await panel.handle('send', { text: 'greet the world' });
  const request = await asked;
  assert.ok(request.kind === 'notification' && request.method === 'claude/permissionRequest');
  await until(() => view.badge === 1, 'the badge counts the waiting chat');
  const ended = next(panel, isNote('claude/turnEnded'));
  await chat.respondPermission({ requestId: request.params.requestId, decision: 'allow' });
  await ended;
  const listed = await until(
    // Its counts as they end up (a file the CLI is writing may be counted in between).
    () =>
      view
        .getChildren()
        .find(
          (c) =>
            c.channelId === chat.channelId &&
            c.changes?.files === 1 &&
            c.changes.added === 1 &&
            c.changes.deleted === 1,
        ),
    'the chat listed with its one changed file, +1 −1',
  );
  assert.equal(view.badge, undefined);
  const item = view.getTreeItem(listed);
  assert.equal(item.label, 'greet');
  assert.equal(item.contextValue, 'chat-worktree');
  assert.match(String(item.description), /\+1 −1 in 1 file/);
  await vscode.commands.executeCommand('claudeSidecar.reviewWorktree', listed);
  await until(
    () => vscode.window.tabGroups.activeTabGroup.activeTab?.label.startsWith('worktree-greet vs main (+1 −1)'),
    'the multi-file diff editor of the worktree',
  );
  panel.panel.dispose();
});

/** A modal, message or picker the extension showed, as the user saw it. */
interface Shown {
  kind: 'quickPick' | 'information' | 'warning' | 'error' | 'inputBox';
  /** The message, or the picker's title, or the input box's prompt. */
  text: string;
  /** A modal's detail. */
  detail?: string;
  modal?: boolean;
  /** A message's buttons or a picker's items, by their labels. */
  choices: string[];
  /** The text an input box offered. */
  value?: string;
}

type MessageArgs = [string, ...(vscode.MessageOptions | string | vscode.MessageItem)[]];

/**
 * Plays the user at VS Code's modals, messages and pickers while `run` runs (they cannot be
 * clicked from a test): each one shown is recorded and answered with the next of `answers`, a
 * button's or an item's label, or the text left in an input box (undefined: dismissed, Escape). A non-modal information message
 * is recorded and left unanswered without taking an answer. The window's own functions come
 * back afterwards.
 */
async function asUser(
  answers: (string | undefined)[],
  run: (shown: Shown[]) => PromiseLike<unknown>,
): Promise<Shown[]> {
  const window = vscode.window as unknown as Record<string, unknown>;
  const names = ['showQuickPick', 'showInformationMessage', 'showWarningMessage', 'showErrorMessage', 'showInputBox'];
  const saved = names.map((n) => window[n]);
  const shown: Shown[] = [];
  const queue = [...answers];
  const answer = (what: Shown): string | undefined => {
    if (!queue.length) throw new Error(`the test has no answer left for ${JSON.stringify(what)}`);
    const label = queue.shift();
    if (label !== undefined && what.kind !== 'inputBox' && !what.choices.includes(label)) {
      throw new Error(`"${label}" is not among the choices of ${JSON.stringify(what)}`);
    }
    return label;
  };
  const message =
    (kind: 'information' | 'warning' | 'error') =>
    (...[text, ...rest]: MessageArgs): Promise<string | vscode.MessageItem | undefined> => {
      const options = typeof rest[0] === 'object' && !('title' in rest[0]) ? rest[0] : undefined;
      const items = (options ? rest.slice(1) : rest) as (string | vscode.MessageItem)[];
      const label = (i: string | vscode.MessageItem) => (typeof i === 'string' ? i : i.title);
      const what: Shown = { kind, text, choices: items.map(label) };
      if (options?.modal) what.modal = true;
      if (options?.detail) what.detail = options.detail;
      shown.push(what);
      if (kind === 'information' && !options?.modal) return Promise.resolve(undefined);
      const pick = answer(what);
      return Promise.resolve(items.find((i) => label(i) === pick));
    };
  window.showInformationMessage = message('information');
  window.showWarningMessage = message('warning');
  window.showErrorMessage = message('error');
  window.showQuickPick = async (
    items: readonly vscode.QuickPickItem[] | Thenable<readonly vscode.QuickPickItem[]>,
    options?: vscode.QuickPickOptions,
  ) => {
    const offered = await items;
    const what: Shown = { kind: 'quickPick', text: options?.title ?? '', choices: offered.map((i) => i.label) };
    shown.push(what);
    const pick = answer(what);
    return offered.find((i) => i.label === pick);
  };
  window.showInputBox = (options?: vscode.InputBoxOptions) => {
    const what: Shown = { kind: 'inputBox', text: options?.prompt ?? '', choices: [], value: options?.value ?? '' };
    shown.push(what);
    return Promise.resolve(answer(what));
  };
  try {
    await run(shown);
  } finally {
    names.forEach((n, i) => (window[n] = saved[i]));
  }
  assert.deepEqual(queue, [], 'the user was asked everything the test meant to answer');
  return shown;
}

/**
 * A chat in the worktree `name` of a fresh repository that did one turn: `prompt` "greet the
 * world" edits hello.py there (its permission allowed), "hello there" only answers. Resolves
 * once the Chats view lists it with what it changed.
 */
async function worktreeChat(
  name: string,
  prompt: 'greet the world' | 'hello there',
  repo = gitRepository(),
): Promise<{ repo: string; panel: ChatPanel; listed: ChannelSummary }> {
  const { extension } = await api();
  const view = extension.chatsView;
  assert.ok(view, 'the Claude Chats view is made at activation');
  await vscode.commands.executeCommand('claudeSidecar.chats.focus');
  const chat = await extension.client.openChat({ cwd: repo, worktree: { name } });
  const panel = extension.show(chat);
  const ended = next(panel, isNote('claude/turnEnded'));
  if (prompt === 'greet the world') {
    const asked = next(panel, isNote('claude/permissionRequest'));
    await panel.handle('send', { text: prompt });
    const request = await asked;
    assert.ok(request.kind === 'notification' && request.method === 'claude/permissionRequest');
    await chat.respondPermission({ requestId: request.params.requestId, decision: 'allow' });
  } else {
    await panel.handle('send', { text: prompt });
  }
  await ended;
  const files = prompt === 'greet the world' ? 1 : 0;
  const listed = await until(
    () =>
      view
        .getChildren()
        .find((c) => c.channelId === chat.channelId && c.state === 'idle' && (c.changes?.files ?? 0) === files),
    `the chat listed, idle, with ${files} changed file(s)`,
  );
  return { repo, panel, listed };
}

/** What `git status` says of `cwd`, and where its branches point: all a merge could move. */
function gitState(cwd: string): string {
  return `${git(cwd, 'status', '--porcelain=v1', '--untracked-files=all')}\n${git(cwd, 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads')}`;
}

test("Claude Chats: Merge asks for the strategy, then the worktree's branch is in the user's checkout, its file and its commit", async () => {
  const { repo, panel, listed } = await worktreeChat('merge-me', 'greet the world');
  // The user picks Merge, then edits the commit message offered (the chat's prompt).
  const shown = await asUser(['Merge', 'Greet the world in hello.py'], () =>
    vscode.commands.executeCommand('claudeSidecar.mergeWorktree', listed),
  );
  assert.deepEqual(shown, [
    {
      kind: 'quickPick',
      text: 'Bring worktree-merge-me into main',
      choices: ['Merge', 'Squash', 'Rebase'],
    },
    {
      kind: 'inputBox',
      text: 'The commit of the 1 file the chat left uncommitted.',
      choices: [],
      value: 'greet the world',
    },
    { kind: 'information', text: 'Claude: worktree-merge-me is in main (merge, 1 file).', choices: [] },
  ]);
  assert.equal(fs.readFileSync(path.join(repo, 'hello.py'), 'utf8'), "print('hello, world')\n");
  // The chat's uncommitted edit became a commit with that message, fast-forwarded onto main.
  assert.deepEqual(git(repo, 'log', '--format=%s', 'main').split('\n'), ['Greet the world in hello.py', 'hello']);
  assert.equal(git(repo, 'status', '--porcelain'), '', "the user's checkout is clean: the merge is all committed");
  panel.panel.dispose();
});

test('Claude Chats: a Merge whose commit message the user dismisses merges nothing', async () => {
  const { repo, panel, listed } = await worktreeChat('not-now', 'greet the world');
  const before = gitState(repo);
  const shown = await asUser(['Rebase', undefined], () =>
    vscode.commands.executeCommand('claudeSidecar.mergeWorktree', listed),
  );
  assert.deepEqual(
    shown.map((s) => s.kind),
    ['quickPick', 'inputBox'],
  );
  assert.equal(gitState(repo), before);
  assert.equal(fs.readFileSync(path.join(repo, 'hello.py'), 'utf8'), "print('hello')\n");
  panel.panel.dispose();
});

test('Claude Chats: a Merge that would touch a file the user changed and did not commit names that file and changes nothing', async () => {
  const { repo, panel, listed } = await worktreeChat('blocked', 'greet the world');
  fs.writeFileSync(path.join(repo, 'hello.py'), "print('my own change')\n");
  const worktree = listed.worktree?.path;
  assert.ok(worktree);
  const before = { checkout: gitState(repo), worktree: gitState(worktree) };
  const shown = await asUser(['Squash', 'greet the world', undefined], () =>
    vscode.commands.executeCommand('claudeSidecar.mergeWorktree', listed),
  );
  assert.deepEqual(
    shown.map((s) => s.kind),
    ['quickPick', 'inputBox', 'error'],
  );
  const refusal = shown[2];
  assert.ok(refusal?.kind === 'error' && refusal.modal, `a modal error: ${JSON.stringify(refusal)}`);
  assert.match(refusal.text, /^Claude: nothing was merged\. .*hello\.py/);
  assert.equal(refusal.detail, 'uncommitted in your checkout: hello.py');
  assert.equal(fs.readFileSync(path.join(repo, 'hello.py'), 'utf8'), "print('my own change')\n");
  assert.equal(fs.readFileSync(path.join(worktree, 'hello.py'), 'utf8'), "print('hello, world')\n");
  assert.deepEqual({ checkout: gitState(repo), worktree: gitState(worktree) }, before);
  panel.panel.dispose();
});

test('Claude Chats: Discard, confirmed, ends the chat and removes its worktree and branch', async () => {
  const { extension } = await api();
  const { repo, panel, listed } = await worktreeChat('throwaway', 'hello there');
  const worktree = listed.worktree?.path;
  assert.ok(worktree && fs.existsSync(worktree));
  const shown = await asUser(['Discard'], () =>
    vscode.commands.executeCommand('claudeSidecar.discardWorktree', listed),
  );
  assert.deepEqual(shown, [
    {
      kind: 'warning',
      text: 'Discard the worktree throwaway?',
      modal: true,
      detail: `The chat ends, and ${worktree} and the branch worktree-throwaway are removed.`,
      choices: ['Discard'],
    },
  ]);
  assert.equal(fs.existsSync(worktree), false, 'the worktree is gone');
  assert.equal(git(repo, 'branch', '--list', 'worktree-throwaway'), '', 'and its branch');
  assert.equal(git(repo, 'worktree', 'list', '--porcelain').includes(worktree), false, 'git forgot it too');
  await until(
    () => !extension.chatsView?.getChildren().some((c) => c.channelId === listed.channelId),
    'the chat leaves the Chats view',
  );
  assert.equal(panel.chat.closed, true, "the chat's tab closed with it: its folder is gone");
});

test('Claude Chats: Discard of work never merged names what would be lost; Discard Anyway removes it', async () => {
  const { repo, panel, listed } = await worktreeChat('unmerged', 'greet the world');
  const worktree = listed.worktree?.path;
  assert.ok(worktree);
  const shown = await asUser(['Discard', 'Discard Anyway'], () =>
    vscode.commands.executeCommand('claudeSidecar.discardWorktree', listed),
  );
  assert.deepEqual(
    shown.map((s) => [s.kind, s.modal, s.choices]),
    [
      ['warning', true, ['Discard']],
      ['warning', true, ['Discard Anyway']],
    ],
  );
  const lost = shown[1];
  assert.ok(lost);
  assert.equal(lost.text, 'worktree-unmerged has work that was never merged. Discard it anyway?');
  assert.equal(lost.detail, 'This would be lost:\nuncommitted: hello.py');
  assert.equal(fs.existsSync(worktree), false, 'the worktree is gone');
  assert.equal(git(repo, 'branch', '--list', 'worktree-unmerged'), '', 'and its branch');
  assert.equal(fs.readFileSync(path.join(repo, 'hello.py'), 'utf8'), "print('hello')\n", 'the checkout untouched');
  assert.equal(panel.chat.closed, true, "the chat's tab closed with it");
});

test('Claude Chats: a Merge without a git identity shows the command that sets one, Copy Command copies it, and nothing is merged', async () => {
  const config = vscode.workspace.getConfiguration('claudeSidecar');
  const env = config.get<Record<string, string>>('env', {});
  const home = env.HOME;
  assert.ok(home, 'the settings give the daemon a HOME of its own');
  // git of the daemon reads no user config (an empty one) and no system config.
  const empty = path.join(home, 'empty.gitconfig');
  fs.writeFileSync(empty, '');
  await config.update(
    'env',
    { ...env, GIT_CONFIG_GLOBAL: empty, GIT_CONFIG_NOSYSTEM: '1' },
    vscode.ConfigurationTarget.Global,
  );
  try {
    await vscode.commands.executeCommand('claudeSidecar.restartDaemon');
    const { repo, panel, listed } = await worktreeChat('anonymous', 'greet the world', gitRepository(false));
    const before = gitState(repo);
    const shown = await asUser(['Merge', 'greet the world', 'Copy Command'], () =>
      vscode.commands.executeCommand('claudeSidecar.mergeWorktree', listed),
    );
    assert.deepEqual(
      shown.map((s) => s.kind),
      ['quickPick', 'inputBox', 'error'],
    );
    const refusal = shown[2];
    assert.ok(refusal?.kind === 'error' && refusal.modal, `a modal error: ${JSON.stringify(refusal)}`);
    assert.match(refusal.text, /^Claude: nothing was merged\. Git has no name and email/);
    const fix = 'git config --global user.name "Your Name" && git config --global user.email you@example.com';
    assert.equal(refusal.detail, `in a terminal: ${fix}`);
    assert.deepEqual(refusal.choices, ['Copy Command']);
    assert.equal(await vscode.env.clipboard.readText(), fix, 'Copy Command put it on the clipboard');
    assert.equal(gitState(repo), before, 'nothing merged');
    panel.panel.dispose();
  } finally {
    await config.update('env', env, vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('claudeSidecar.restartDaemon');
  }
});

/** The entry the extension host calls (extensionTestsPath). */
export async function run(): Promise<void> {
  // SIDECAR_EXTENSION_TESTS (a regular expression) runs only the tests whose names match it.
  const only = process.env.SIDECAR_EXTENSION_TESTS;
  const chosen = only ? tests.filter((t) => new RegExp(only).test(t.name)) : tests;
  let failed = 0;
  for (const t of chosen) {
    const started = Date.now();
    try {
      await t.run();
      console.log(`ok - ${t.name} (${Date.now() - started} ms)`);
    } catch (e) {
      failed++;
      console.log(`not ok - ${t.name}\n  ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    }
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  }
  console.log(`# extension tests: ${chosen.length - failed} passed, ${failed} failed`);
  if (failed) throw new Error(`${failed} extension test(s) failed`);
}
