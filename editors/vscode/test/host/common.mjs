// Shared helpers for the VS Code host harness (Node >= 20, ESM, no dependencies beyond playwright-core).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const HOST_DIR = path.dirname(fileURLToPath(import.meta.url));
export const VSCODE_DIR = path.resolve(HOST_DIR, '..', '..'); // editors/vscode
export const DEFAULT_TOOLCHAIN_DIR = path.join(VSCODE_DIR, '.toolchain');

/** User settings for every run: no bundled AI hosts, no welcome editor, no trust prompt. */
export const BASE_SETTINGS = {
  'chat.disableAIFeatures': true,
  'workbench.startupEditor': 'none',
  'security.workspace.trust.enabled': false,
  // Quiet: no marketplace/update traffic (the network reaches no gallery here), no recommendations.
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  'update.mode': 'none',
  'telemetry.telemetryLevel': 'off',
};

/** Chromium flags from /work/shared/design/toolchains.md. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
];

/** A prerequisite (toolchain) is missing. Under CI=true this must be a failure, otherwise a skip. */
export class PrerequisiteError extends Error {
  constructor(message) {
    super(message);
    this.name = 'PrerequisiteError';
  }
}

export const isCI = () => /^(1|true|yes)$/i.test(process.env.CI || '');

/**
 * Report a missing prerequisite and exit: CI=true -> exit 1 ("FAIL"), else exit 0 with a SKIP line.
 * Set VSCODE_HOST_SKIP_EXIT_CODE to use another exit code for the skip (e.g. 77).
 */
export function exitForPrerequisite(err, what) {
  const hint = 'run editors/vscode/scripts/toolchain.sh first';
  if (isCI()) {
    console.error(`FAIL ${what}: missing prerequisite (CI=true, not skipping): ${err.message} -- ${hint}`);
    process.exit(1);
  }
  console.error(`SKIP ${what}: missing prerequisite: ${err.message} -- ${hint}`);
  process.exit(Number(process.env.VSCODE_HOST_SKIP_EXIT_CODE || 0));
}

/**
 * Locate the toolchain: CODE_SERVER, VSCODE_SERVER_MAIN, NODE24, CHROMIUM, PLAYWRIGHT_CORE from the
 * environment, else from <toolchain>/env.sh (written by scripts/toolchain.sh). Throws PrerequisiteError.
 */
export function loadToolchain() {
  const keys = ['CODE_SERVER', 'VSCODE_SERVER_MAIN', 'NODE24', 'CHROMIUM', 'PLAYWRIGHT_CORE'];
  // playwright-core is a devDependency of the extension (npm ci installs it; it downloads no browser).
  const defaults = { PLAYWRIGHT_CORE: path.join(VSCODE_DIR, 'node_modules', 'playwright-core') };
  const dir = process.env.VSCODE_TOOLCHAIN_DIR || DEFAULT_TOOLCHAIN_DIR;
  const envFile = path.join(dir, 'env.sh');
  const fromFile = {};
  if (fs.existsSync(envFile)) {
    for (const line of fs.readFileSync(envFile, 'utf8').split('\n')) {
      const m = /^export ([A-Z0-9_]+)='([^']*)'$/.exec(line.trim());
      if (m) fromFile[m[1]] = m[2];
    }
  }
  const tc = {};
  // vsce is a devDependency of the extension (npm ci installs it).
  const vsce = process.env.VSCE || path.join(VSCODE_DIR, 'node_modules', '.bin', 'vsce');
  if (fs.existsSync(vsce)) tc.VSCE = vsce;
  for (const k of keys) {
    tc[k] = process.env[k] || fromFile[k] || defaults[k];
    if (!tc[k]) throw new PrerequisiteError(`${k} not set and not found in ${envFile}`);
    if (!fs.existsSync(tc[k])) throw new PrerequisiteError(`${k}=${tc[k]} does not exist`);
  }
  return tc;
}

/** playwright-core's `chromium`, loaded from the toolchain path (works from ESM without node_modules here). */
export function loadPlaywright(tc) {
  const require = createRequire(import.meta.url);
  return require(tc.PLAYWRIGHT_CORE);
}

export async function launchChromium(tc, { headless = true, args = [] } = {}) {
  const { chromium } = loadPlaywright(tc);
  return chromium.launch({ executablePath: tc.CHROMIUM, headless, args: [...CHROMIUM_ARGS, ...args] });
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** Resolve once a TCP connect to host:port succeeds; reject after timeoutMs or if `alive()` turns false. */
export async function waitForPort(port, { host = '127.0.0.1', timeoutMs = 60000, alive = () => true } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise((resolve) => {
      const s = net.connect(port, host);
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (!alive()) throw new Error(`server exited before listening on ${host}:${port}`);
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${host}:${port}`);
    await sleep(100);
  }
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Fresh work dir with HOME, XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_CACHE_HOME, TMPDIR inside it.
 * Returns {dir, env} where env is the isolated part of the environment.
 */
export function makeWorkDir(prefix = 'vscode-host-') {
  const base = process.env.VSCODE_HOST_WORK_ROOT || os.tmpdir();
  fs.mkdirSync(base, { recursive: true });
  const dir = fs.mkdtempSync(path.join(base, prefix));
  const env = {
    HOME: path.join(dir, 'home'),
    XDG_CONFIG_HOME: path.join(dir, 'config'),
    XDG_DATA_HOME: path.join(dir, 'data'),
    XDG_CACHE_HOME: path.join(dir, 'cache'),
    TMPDIR: path.join(dir, 'tmp'),
  };
  for (const d of Object.values(env)) fs.mkdirSync(d, { recursive: true });
  return { dir, env };
}

export function writeSettings(userDir, settings) {
  fs.mkdirSync(userDir, { recursive: true });
  const file = path.join(userDir, 'settings.json');
  fs.writeFileSync(file, JSON.stringify({ ...BASE_SETTINGS, ...settings }, null, 2) + '\n');
  return file;
}

/**
 * Spawn `cmd args` in its own process group (setsid semantics via detached: true).
 * stdout/stderr go to `logFile` and, when `onLine` is given, line by line to it.
 * Returns {child, pid, exited (Promise<{code, signal}>), isAlive(), kill()} -- kill() signals the whole group.
 */
export function spawnGroup(cmd, args, { env, cwd, logFile, onLine } = {}) {
  const child = spawn(cmd, args, { env, cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const log = logFile ? fs.createWriteStream(logFile, { flags: 'a' }) : null;
  let alive = true;
  const exited = new Promise((resolve) =>
    child.on('exit', (code, signal) => {
      alive = false;
      resolve({ code, signal });
    }),
  );
  child.on('error', (err) => {
    alive = false;
    log?.write(`spawn error: ${err.message}\n`);
  });
  for (const stream of [child.stdout, child.stderr]) {
    let buf = '';
    stream.on('data', (chunk) => {
      log?.write(chunk);
      if (!onLine) return;
      buf += chunk.toString();
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        onLine(buf.slice(0, i));
        buf = buf.slice(i + 1);
      }
    });
  }
  const group = { child, pid: child.pid, exited, isAlive: () => alive };
  group.kill = async (graceMs = 2000) => {
    const signalGroup = (sig) => {
      try {
        process.kill(-child.pid, sig);
        return true;
      } catch {
        return false;
      }
    };
    if (!signalGroup('SIGTERM')) return; // group already gone
    const deadline = Date.now() + graceMs;
    // Wait for the group (not only the leader) to disappear. Zombies do not count: orphaned members are
    // reparented to PID 1, which in some containers reaps them only every second or two.
    while (Date.now() < deadline && groupHasLiveMembers(child.pid, signalGroup)) await sleep(50);
    signalGroup('SIGKILL');
    await Promise.race([exited, sleep(1000)]);
    log?.end();
  };
  // Never leave the group behind if this Node process dies.
  const onExit = () => {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // the group is gone already
    }
  };
  process.once('exit', onExit);
  exited.then(() => process.removeListener('exit', onExit));
  return group;
}

/** True while some non-zombie process has process group `pgid` (Linux /proc; else signal 0). */
export function groupHasLiveMembers(
  pgid,
  signalGroup = (sig) => {
    try {
      process.kill(-pgid, sig);
      return true;
    } catch {
      return false;
    }
  },
) {
  let entries;
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return signalGroup(0);
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    let stat;
    try {
      stat = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
    } catch {
      continue;
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // state ppid pgrp ...
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true;
  }
  return false;
}

/** Simple `--flag value` / repeated `--env K=V` parser. */
export function parseArgs(argv, spec) {
  const out = {};
  for (const [k, v] of Object.entries(spec)) if (v === 'list') out[k] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '-h' || a === '--help') {
      out.help = true;
      continue;
    }
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(a);
    if (!m || !(m[1] in spec)) throw new Error(`unknown argument: ${a}`);
    const kind = spec[m[1]];
    if (kind === 'bool') {
      out[m[1]] = true;
      continue;
    }
    const val = m[2] !== undefined ? m[2] : argv[++i];
    if (val === undefined) throw new Error(`${a} needs a value`);
    if (kind === 'list') out[m[1]].push(val);
    else out[m[1]] = val;
  }
  return out;
}

export function parseEnvPairs(pairs) {
  const env = {};
  for (const p of pairs) {
    const i = p.indexOf('=');
    if (i <= 0) throw new Error(`--env expects K=V, got ${p}`);
    env[p.slice(0, i)] = p.slice(i + 1);
  }
  return env;
}
