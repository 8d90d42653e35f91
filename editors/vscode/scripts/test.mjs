#!/usr/bin/env node
// The VS Code client's whole test suite, in order, with one summary at the end:
// protocol types fresh, type check, build, core tests (real daemon and CLI), webview tests
// (headless Chromium), extension tests inside a real VS Code, the .vsix (packaged once, checked
// against the stores' rules, then installed by the UI runs: private and shared daemon).
// Any failure fails the suite; so does a missing prerequisite when CI=true.
//
//   npm test                   everything
//   npm test -- core webview   only the named steps
//   npm test -- --skip=typecheck  every step but the named ones (comma-separated); tests/run-all.sh
//                              skips typecheck, which its TypeScript checks suite has just run

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const node = process.execPath;

function testFiles(dir) {
  const full = path.join(HERE, dir);
  if (!fs.existsSync(full)) return [];
  return fs
    .readdirSync(full)
    .filter((f) => f.endsWith('.test.cjs'))
    .map((f) => path.join(dir, f));
}

const STEPS = [
  {
    name: 'protocol',
    what: 'protocol types match docs/protocol.schema.json',
    cmd: () => [node, 'scripts/gen-protocol.mjs', '--check'],
  },
  {
    name: 'typecheck',
    what: 'tsc (strict): host, webview and tests, each with its own types',
    cmd: () => ['npm', 'run', '--silent', 'typecheck'],
  },
  { name: 'build', what: 'esbuild bundles', cmd: () => [node, 'esbuild.mjs'] },
  {
    name: 'core',
    what: 'core against the real daemon and CLI',
    cmd: () => [node, '--test', '--test-reporter=spec', ...testFiles('out/test/core')],
  },
  {
    name: 'webview',
    what: 'chat webview in headless Chromium',
    cmd: () => [node, '--test', '--test-reporter=spec', ...testFiles('out/test/webview')],
  },
  { name: 'extension', what: 'extension tests inside VS Code (code-server)', cmd: () => [node, 'test/vscode/run.mjs'] },
  { name: 'package', what: 'production build and .vsix (vsce)', cmd: () => ['npm', 'run', '--silent', 'package'] },
  {
    name: 'vsix',
    what: 'the .vsix against the Marketplace and Open VSX rules',
    cmd: () => [node, '--test', '--test-reporter=spec', ...testFiles('out/test/package')],
  },
  { name: 'ui', what: 'UI run: palette -> chat -> permission -> diff', cmd: () => [node, 'test/vscode/ui.mjs'] },
  {
    name: 'ui-chats',
    what: 'UI run: three worktree chats in the Claude Chats view, its tooltip, Review',
    cmd: () => [node, 'test/vscode/chats-view-shot.mjs', '--out', 'test-artifacts/chats-view/view.png'],
  },
  {
    name: 'ui-shared',
    what: 'UI run, shared daemon: two windows on one chat, reload mid-turn',
    cmd: () => [node, 'test/vscode/ui-shared.mjs'],
  },
];

const args = process.argv.slice(2);
const skip = args.filter((a) => a.startsWith('--skip=')).flatMap((a) => a.slice('--skip='.length).split(','));
const only = args.filter((a) => !a.startsWith('--skip='));
for (const name of [...only, ...skip]) {
  if (!STEPS.some((s) => s.name === name)) {
    console.error(`no step named ${name}; the steps: ${STEPS.map((s) => s.name).join(' ')}`);
    process.exit(2);
  }
}
const chosen = STEPS.filter((s) => (!only.length || only.includes(s.name)) && !skip.includes(s.name));
const results = [];
for (const step of chosen) {
  const [cmd, ...args] = step.cmd();
  console.log(`\n=== ${step.name}: ${step.what}`);
  const started = Date.now();
  const run = spawnSync(cmd, args, { cwd: HERE, stdio: 'inherit', env: process.env });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const ok = run.status === 0;
  results.push({ step, ok, seconds, status: run.status ?? run.signal });
  // Nothing after a failed build can run meaningfully.
  if (!ok && ['protocol', 'typecheck', 'build'].includes(step.name)) break;
}

console.log('\n=== VS Code client: summary');
for (const r of results) {
  console.log(
    `${r.ok ? 'PASS' : 'FAIL'}  ${r.step.name.padEnd(10)} ${String(r.seconds).padStart(6)} s  ${r.step.what}`,
  );
}
for (const s of chosen.slice(results.length)) console.log(`NOT RUN  ${s.name}`);
for (const name of skip) console.log(`SKIPPED  ${name} (--skip)`);
const failed = results.filter((r) => !r.ok).length + (chosen.length - results.length);
console.log(failed ? `VS Code client: ${failed} step(s) failed` : `VS Code client: all ${results.length} steps passed`);
process.exit(failed ? 1 : 0);
