// What the core tests share: the stand-in model, an isolated HOME and workspace, a client
// on the real daemon and the real CLI, and waiting for a chat's events.

import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Chat } from '../../src/core/chat';
import { SidecarClient, type ClientOptions, type DaemonStarter } from '../../src/core/client';
import type { ClaudeNotifications } from '../../src/core/protocol.generated';
import type { ChannelNotifications, ChatEvent } from '../../src/core/chat-state';

/** The repository's root (the folder with pyproject.toml). */
export function repoRoot(): string {
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'pyproject.toml'))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error('cannot find the repository root (pyproject.toml) above ' + __dirname);
    dir = up;
  }
  return dir;
}

/** The daemon executable of the repository's virtualenv (`uv sync` makes it). */
export function sidecarBin(): string {
  const bin = process.env.CLAUDE_SIDECAR_BIN ?? path.join(repoRoot(), '.venv', 'bin', 'claude-sidecar');
  if (!fs.existsSync(bin)) throw new Error(`${bin} is missing: run \`uv sync\` in ${repoRoot()} first`);
  return bin;
}

export interface Model {
  url: string;
  stop(): Promise<void>;
}

/** Starts `claude-sidecar scripted-model` with a scenario (see docs/scripted-model.md), written
 * into `dir`: a folder of the model's own, removed when it stops. */
export async function startModel(scenario: unknown, dir: string): Promise<Model> {
  const file = path.join(dir, 'scenario.json');
  fs.writeFileSync(file, JSON.stringify(scenario));
  const child: ChildProcess = spawn(sidecarBin(), ['scripted-model', '--scenario', file, '--port', '0'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`the stand-in model did not start: ${seen}`)), 20_000);
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      seen += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(seen);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code) => reject(new Error(`the stand-in model exited (${code}): ${seen}`)));
  });
  return {
    url,
    // Its folder goes with it (each test file left one in the temporary folder).
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGINT');
      }).then(() => fs.rmSync(dir, { recursive: true, force: true })),
  };
}

/** An own HOME and workspace, and the environment that points the CLI at the model. */
export interface Sandbox {
  root: string;
  home: string;
  workspace: string;
  env: NodeJS.ProcessEnv;
}

export function sandbox(model: Model): Sandbox {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-vscode-'));
  const home = path.join(root, 'home');
  const workspace = path.join(root, 'workspace');
  fs.mkdirSync(home);
  fs.mkdirSync(workspace);
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith('ANTHROPIC_') && !k.startsWith('CLAUDE') && v !== undefined) env[k] = v;
  }
  Object.assign(env, {
    HOME: home,
    ANTHROPIC_BASE_URL: model.url,
    ANTHROPIC_API_KEY: 'sk-ant-test-dummy',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  });
  return { root, home, workspace, env };
}

/** A client on the real daemon; the warm pool is off unless asked for (it costs a CLI). */
export function client(box: Sandbox, options: Partial<ClientOptions> = {}, starter?: DaemonStarter): SidecarClient {
  return new SidecarClient(
    {
      command: [sidecarBin(), '--stdio'],
      env: box.env,
      cwd: box.workspace,
      log: process.env.SIDECAR_TEST_LOG ? (level, m) => console.error(`[${level}] ${m}`) : undefined,
      ...options,
      initializationOptions: { warmPool: { size: 0 }, ...options.initializationOptions },
    },
    starter,
  );
}

type Notification = {
  [M in keyof ChannelNotifications]: { method: M; params: ChannelNotifications[M] };
}[keyof ChannelNotifications];

/** Records a chat's events from now on, and waits for the ones a test expects. */
export class Recorder {
  readonly events: ChatEvent[] = [];
  private waiters: { test: (e: ChatEvent) => boolean; resolve: (e: ChatEvent) => void }[] = [];

  constructor(readonly chat: Chat) {
    chat.onEvent((e) => {
      this.events.push(e);
      this.waiters = this.waiters.filter((w) => {
        if (!w.test(e)) return true;
        w.resolve(e);
        return false;
      });
    });
  }

  /** The notifications recorded so far. */
  notifications(): Notification[] {
    return this.events.flatMap((e) =>
      e.kind === 'notification' ? [{ method: e.method, params: e.params } as Notification] : [],
    );
  }

  /** Waits for the next notification `method` (from the mark `since`, default: from now) matching `test`. */
  async next<M extends keyof ChannelNotifications>(
    method: M,
    test: (params: ChannelNotifications[M]) => boolean = () => true,
    { since, timeoutMs = 60_000 }: { since?: number; timeoutMs?: number } = {},
  ): Promise<ChannelNotifications[M]> {
    const match = (e: ChatEvent) =>
      e.kind === 'notification' && e.method === method && test(e.params as ChannelNotifications[M]);
    const seen = await this.event(match, { since, timeoutMs, what: method });
    return (seen as unknown as { params: ChannelNotifications[M] }).params;
  }

  /** Waits for the next event (from the mark `since`, default: from now) matching `test`;
   * `timeoutMs` is a hang guard. */
  async event(
    test: (e: ChatEvent) => boolean,
    { since, timeoutMs = 60_000, what = 'matching event' }: { since?: number; timeoutMs?: number; what?: string } = {},
  ): Promise<ChatEvent> {
    if (since !== undefined) {
      const seen = this.events.slice(since).find(test);
      if (seen) return seen;
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no ${what} within ${timeoutMs} ms; saw: ${this.summary()}`)),
        timeoutMs,
      );
      this.waiters.push({
        test,
        resolve: (e) => {
          clearTimeout(timer);
          resolve(e);
        },
      });
    });
  }

  /** A position in the recording, to wait "from here" without racing the action that follows. */
  mark(): number {
    return this.events.length;
  }

  /** Sends `text` and waits for the end of its turn. */
  async turn(text: string): Promise<ClaudeNotifications['claude/turnEnded']> {
    const since = this.mark();
    const messageId = await this.chat.send(text);
    return this.next('claude/turnEnded', (p) => (p.messageIds ?? []).includes(messageId), { since });
  }

  private summary(): string {
    return this.events
      .slice(-15)
      .map((e) => (e.kind === 'notification' ? e.method : e.kind))
      .join(', ');
  }
}

/**
 * Skips the test `t` when the daemon under test does not serve `feature` (its `initialize`
 * answer does not list it): tests/cross-release.sh runs these tests against the last
 * release's daemon, which may predate the feature. Starts the client's daemon to ask it.
 * The only reason a core test may skip, with CI=true too. node:test (Node 20) runs no
 * afterEach hook for a test that skipped itself, so `cleanUp` (what afterEach does: dispose
 * the client, remove the sandbox) is run here first; it must bear being run twice. Use it
 * first in the test:
 * `if (!(await requireFeature(t, sidecar, 'transcriptPaging', cleanUp))) return;`
 */
export async function requireFeature(
  t: { skip(message?: string): void },
  sidecar: SidecarClient,
  feature: string,
  cleanUp: () => Promise<void> | void,
): Promise<boolean> {
  const daemon = await sidecar.daemon();
  if (sidecar.features?.has(feature)) return true;
  // Named by the version it gives: the path is a fork server's stand-in in the test command.
  const version = daemon.initializeResult?.serverInfo.version ?? `at ${sidecarBin()}`;
  await cleanUp();
  t.skip(`the daemon under test (claude-sidecar ${version}) does not serve ${feature}`);
  return false;
}

/**
 * Stores a long session in the sandbox's HOME for its workspace: a real short session's
 * conversation repeated `copies` times with fresh ids, 7 entries a copy
 * (tests/repeated_session.py, run by the repository's Python). Returns its session id.
 */
export function storeLongSession(box: Sandbox, copies: number): string {
  const sessionId = '6b1e0c2d-3f4a-4b5c-8d6e-7f8091a2b3c4';
  const python = path.join(repoRoot(), '.venv', 'bin', 'python');
  if (!fs.existsSync(python)) throw new Error(`${python} is missing: run \`uv sync\` in ${repoRoot()} first`);
  const script = [
    'import sys',
    'from pathlib import Path',
    'from claude_sidecar.cli.paths import project_dir',
    'from tests.repeated_session import write_long_session',
    'folder = project_dir(Path(sys.argv[1]), sys.argv[2])',
    'folder.mkdir(parents=True, exist_ok=True)',
    'write_long_session(folder / f"{sys.argv[4]}.jsonl", int(sys.argv[3]), sys.argv[4])',
  ].join('\n');
  execFileSync(python, ['-c', script, box.home, box.workspace, String(copies), sessionId], {
    cwd: repoRoot(),
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return sessionId;
}

/** Whether a process still runs. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits until none of `pids` runs; fails naming those that outlived the wait. */
export async function assertAllGone(pids: number[], timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let left = pids.filter(alive);
  while (left.length && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    left = pids.filter(alive);
  }
  assert.deepEqual(left, [], `processes outlived the client: ${left.join(', ')}`);
}

export function removeSandbox(box: Sandbox): void {
  fs.rmSync(box.root, { recursive: true, force: true });
}

/** A `claude-sidecar serve` of the test's own, on a short socket path of its own. */
export interface SharedDaemon {
  socket: string;
  pid: number;
  /** The command a client reaches it with (`claude-sidecar connect --socket ...`). */
  connect: string[];
  /** Ends the daemon (SIGTERM: it closes its chats; `kill`: SIGKILL, as a crash) and waits
   * until it is gone; `keep` leaves the socket's directory for a daemon started after it. */
  stop(how?: { kill?: boolean; keep?: boolean }): Promise<void>;
}

/** Starts the shared daemon (`serve`, no warm pool, `args` more; on `socketPath`, else a
 * socket of its own) and waits until its socket answers. */
export async function startShared(box: Sandbox, args: string[] = [], socketPath?: string): Promise<SharedDaemon> {
  // A Unix socket path must stay short (sun_path): not under the sandbox's long temp path.
  const socket = socketPath ?? path.join(fs.mkdtempSync('/tmp/cs-'), 'daemon.sock');
  const dir = path.dirname(socket);
  const log = fs.openSync(path.join(box.root, 'daemon.log'), 'a');
  const child = spawn(
    sidecarBin(),
    ['--log-level', 'DEBUG', 'serve', '--socket', socket, '--warm-pool', '0', '--linger', '60', ...args],
    { env: box.env, stdio: ['ignore', log, log] },
  );
  fs.closeSync(log);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (let delay = 10; ; delay = Math.min(delay * 2, 100)) {
    if (child.exitCode !== null) throw new Error(`the shared daemon exited with ${child.exitCode}`);
    // Polls: the daemon's readiness is not an event this process can await.
    if (await answers(socket)) break;
    await new Promise((r) => setTimeout(r, delay));
  }
  return {
    socket,
    pid: child.pid!,
    connect: [sidecarBin(), 'connect', '--socket', socket],
    stop: async ({ kill = false, keep = false } = {}) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(kill ? 'SIGKILL' : 'SIGTERM');
      await exited;
      if (!keep) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

function answers(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createConnection(socket);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}

/** The real CLI the daemon runs in the sandbox (claude_sidecar.cli.discovery.find_cli with its environment). */
export function realCli(box: Sandbox): string {
  const python = path.join(repoRoot(), '.venv', 'bin', 'python');
  const script = 'from claude_sidecar.cli.discovery import find_cli; print(find_cli())';
  return execFileSync(python, ['-c', script], { cwd: repoRoot(), env: box.env, encoding: 'utf8' }).trim();
}

/**
 * Makes the sandbox's daemon hold the CLI of every resume (tests/fixtures/held-cli.sh: it
 * waits for a file) until the returned function is called: what a resumed chat shows while
 * its CLI starts is checked without sleeps. `cli`: the CLI held (default: the real one).
 * Call it before the client starts its daemon.
 */
export function holdResumes(box: Sandbox, cli = realCli(box)): () => void {
  const go = path.join(box.root, 'go');
  Object.assign(box.env, {
    CLAUDE_SIDECAR_CLI: path.join(repoRoot(), 'tests', 'fixtures', 'held-cli.sh'),
    CLAUDE_SIDECAR_HELD_CLI: cli,
    CLAUDE_SIDECAR_HOLD: go,
  });
  return () => fs.writeFileSync(go, '');
}
