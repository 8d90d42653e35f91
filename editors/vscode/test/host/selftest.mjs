#!/usr/bin/env node
// Self-test of the harness against fixture-extension/: both routes, one summary line each.
//   node selftest.mjs [--screenshot-dir DIR] [--verbose] [--skip-negative]
// 1. extension-tests: run-extension-tests route with --env; the fixture's test index must pass (exit 0).
// 2. extension-tests-negative: same suite without the env var must fail with exit 1 (exit codes propagate).
// 3. ui: code-server with the fixture installed from a .vsix packed by vsce with a license and a repository, and
//    no warning (or copied as a folder when vsce is absent), command run from the palette, notification seen,
//    screenshot taken, output file + env checked.
// Exit 0 when all pass; 1 otherwise. Missing toolchain: FAIL under CI=true, else SKIP (see common.mjs).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HOST_DIR, PrerequisiteError, VSCODE_DIR, exitForPrerequisite, loadToolchain, parseArgs } from './common.mjs';
import { runExtensionTests } from './run-extension-tests.mjs';
import { closeWorkbench, openWorkbench, runCommand, screenshot, startCodeServer, waitForNotification } from './ui.mjs';

const FIXTURE = path.join(HOST_DIR, 'fixture-extension');
const args = parseArgs(process.argv.slice(2), { 'screenshot-dir': 'str', verbose: 'bool', 'skip-negative': 'bool' });
let tc;
try {
  tc = loadToolchain();
} catch (err) {
  if (err instanceof PrerequisiteError) exitForPrerequisite(err, 'VS Code host self-test');
  throw err;
}
const shots = path.resolve(args['screenshot-dir'] || path.join(os.tmpdir(), 'vscode-host-selftest'));
fs.mkdirSync(shots, { recursive: true });
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'vscode-host-selftest-'));
const summary = [];
const secs = (ms) => `${(ms / 1000).toFixed(1)} s`;
const record = (route, ok, detail, ms) => {
  summary.push(`${ok ? 'PASS' : 'FAIL'} ${route}: ${detail} (${secs(ms)})`);
};
const indent = (prefix) => (line) => console.log(`${prefix}${line}`);

async function routeExtensionTests() {
  const ws = fs.realpathSync(fs.mkdtempSync(path.join(scratch, 'ws-')));
  const lines = [];
  const res = await runExtensionTests({
    toolchain: tc,
    extension: FIXTURE,
    tests: path.join(FIXTURE, 'test', 'index.js'),
    workspace: ws,
    env: { SIDECAR_FIXTURE_ENV: 'from-harness', SIDECAR_FIXTURE_WORKSPACE: ws },
    timeoutS: 120,
    screenshotDir: shots,
    verbose: args.verbose,
    log: (l) => {
      lines.push(l);
      indent('  | ')(l);
    },
  });
  const passing = lines.find((l) => /\d+ passing, \d+ failing/.test(l)) || 'no summary line';
  const wrote = fs.existsSync(path.join(ws, 'fixture-output.json'));
  const ok = res.exitCode === 0 && /4 passing, 0 failing/.test(passing) && wrote;
  record(
    'extension-tests',
    ok,
    `exit ${res.exitCode}, ${passing}, output file ${wrote ? 'written' : 'MISSING'}`,
    res.durationMs,
  );
}

async function routeExtensionTestsNegative() {
  const ws = fs.realpathSync(fs.mkdtempSync(path.join(scratch, 'ws-neg-')));
  const env = { SIDECAR_FIXTURE_WORKSPACE: ws };
  const saved = process.env.SIDECAR_FIXTURE_ENV;
  delete process.env.SIDECAR_FIXTURE_ENV;
  try {
    const res = await runExtensionTests({
      toolchain: tc,
      extension: FIXTURE,
      tests: path.join(FIXTURE, 'test'),
      workspace: ws,
      env,
      timeoutS: 120,
      log: args.verbose ? indent('  | ') : () => {},
    });
    fs.rmSync(res.workDir, { recursive: true, force: true });
    record(
      'extension-tests-negative',
      res.exitCode === 1,
      `failing suite -> exit ${res.exitCode} (want 1)`,
      res.durationMs,
    );
  } finally {
    if (saved !== undefined) process.env.SIDECAR_FIXTURE_ENV = saved;
  }
}

async function routeUi() {
  const t0 = Date.now();
  const ws = fs.realpathSync(fs.mkdtempSync(path.join(scratch, 'ws-ui-')));
  const steps = [];
  const lap = (() => {
    let t = Date.now();
    return (name) => {
      steps.push(`${name} ${secs(Date.now() - t)}`);
      t = Date.now();
    };
  })();
  let install = 'folder copy';
  let vsix;
  if (tc.VSCE) {
    // Packed as the extension is (scripts/package.mjs): with the repository's LICENSE, copied in
    // for the time of packaging, and no warning of vsce (stdin closed: a warning's question is
    // answered no).
    const packDir = path.join(scratch, 'fixture-extension');
    fs.cpSync(FIXTURE, packDir, { recursive: true });
    fs.copyFileSync(path.join(VSCODE_DIR, '..', '..', 'LICENSE'), path.join(packDir, 'LICENSE'));
    vsix = path.join(scratch, 'fixture.vsix');
    const r = spawnSync(tc.VSCE, ['package', '--no-dependencies', '--out', vsix], {
      cwd: packDir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (r.status !== 0 || /WARNING/.test(`${r.stdout}${r.stderr}`)) {
      throw new Error(`vsce package failed or warned:\n${r.stdout}\n${r.stderr}`);
    }
    install = 'vsix';
    lap('pack');
  }
  const env = {
    SIDECAR_FIXTURE_ENV: 'from-ui',
    CLAUDE_SIDECAR_CLI: '/opt/sidecar/bin/claude-sidecar',
    ANTHROPIC_BASE_URL: 'http://127.0.0.1:9/',
  };
  const cs = await startCodeServer({
    toolchain: tc,
    workspace: ws,
    env,
    verbose: args.verbose,
    ...(vsix ? { extensionVsix: vsix } : { extensionDir: FIXTURE }),
  });
  lap('start');
  let page;
  let ok = false;
  let detail;
  try {
    page = await openWorkbench(cs.url, { toolchain: tc });
    lap('workbench');
    await runCommand(page, 'Sidecar Fixture: Write File');
    const note = await waitForNotification(page, 'Sidecar fixture wrote');
    lap('command');
    const shot = await screenshot(page, path.join(shots, 'ui-fixture-command.png'));
    const out = JSON.parse(fs.readFileSync(path.join(ws, 'fixture-output.json'), 'utf8'));
    const envOk = Object.entries(env).every(([k, v]) => out.env[k] === v);
    ok = envOk;
    detail =
      `installed as ${install}, notification "${note.trim()}", env ${envOk ? 'reached' : 'DID NOT reach'} the extension host ` +
      `(${JSON.stringify(out.env)}), screenshot ${shot}`;
  } catch (err) {
    detail = `error: ${err.message.split('\n')[0]}`;
    if (page) await screenshot(page, path.join(shots, 'ui-fixture-failure.png')).catch(() => {});
  } finally {
    await closeWorkbench(page);
    await cs.stop({ keepWorkDir: !ok });
    lap('stop');
  }
  if (!ok) detail += `; code-server log: ${cs.logFile}`;
  record('ui', ok, `${detail}; ${steps.join(', ')}`, Date.now() - t0);
}

let failed = false;
for (const [name, fn] of [
  ['extension-tests', routeExtensionTests],
  ...(args['skip-negative'] ? [] : [['extension-tests-negative', routeExtensionTestsNegative]]),
  ['ui', routeUi],
]) {
  try {
    await fn();
  } catch (err) {
    summary.push(`FAIL ${name}: ${err.stack || err}`);
  }
}
for (const line of summary) {
  console.log(line);
  if (line.startsWith('FAIL')) failed = true;
}
if (!failed) fs.rmSync(scratch, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
