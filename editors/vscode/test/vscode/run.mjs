#!/usr/bin/env node
// Runs the extension tests (out/test/vscode/index.js) inside a real VS Code: code-server's
// VS Code server, opened in headless Chromium, with the extension under development, a
// fresh workspace, the repository's daemon and the stand-in model.
//
//   node test/vscode/run.mjs [--verbose]
// Needs: `npm run build`, the toolchain (scripts/toolchain.sh) and `uv sync` at the root.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { exitForPrerequisite, PrerequisiteError, VSCODE_DIR } from '../host/common.mjs';
import { runExtensionTests } from '../host/run-extension-tests.mjs';

const ROOT = path.resolve(VSCODE_DIR, '..', '..');
const SIDECAR = path.join(ROOT, '.venv', 'bin', 'claude-sidecar');

/** The stand-in model's script, shared with the core tests. */
const SCENARIO = path.join(VSCODE_DIR, 'test', 'scenario.json');

/** Starts `claude-sidecar scripted-model`; resolves with its URL and a stop function. */
export async function startModel(scenario) {
  const child = spawn(SIDECAR, ['scripted-model', '--scenario', scenario, '--port', '0'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const url = await new Promise((resolve, reject) => {
    let seen = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk) => {
      seen += chunk;
      const m = /listening on (http:\/\/\S+)/.exec(seen);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`the stand-in model exited (${code}): ${seen}`)));
  });
  return { url, stop: () => child.kill('SIGINT') };
}

/** A fresh HOME and workspace, and the settings that point the extension at them. */
export function sandbox(modelUrl) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-vscode-ext-'));
  const home = path.join(root, 'home');
  const workspace = path.join(root, 'workspace');
  fs.mkdirSync(home);
  fs.mkdirSync(workspace);
  fs.writeFileSync(path.join(workspace, 'hello.py'), "print('hello')\n");
  const settings = {
    // The bundled chat view is disabled (no AI host here): its empty sidebar would only take room.
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
    'claudeSidecar.daemonCommand': [SIDECAR, '--stdio'],
    'claudeSidecar.env': {
      HOME: home,
      ANTHROPIC_BASE_URL: modelUrl,
      ANTHROPIC_API_KEY: 'sk-ant-test-dummy',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    },
  };
  return { root, home, workspace, settings };
}

async function main() {
  if (!fs.existsSync(SIDECAR)) {
    console.error(`${SIDECAR} is missing: run \`uv sync\` in ${ROOT}`);
    process.exit(2);
  }
  const model = await startModel(SCENARIO);
  const box = sandbox(model.url);
  try {
    const { exitCode } = await runExtensionTests({
      extension: VSCODE_DIR,
      tests: path.join(VSCODE_DIR, 'out', 'test', 'vscode', 'index.js'),
      workspace: box.workspace,
      settings: box.settings,
      timeoutS: 300,
      screenshotDir: path.join(VSCODE_DIR, 'test-artifacts', 'vscode'),
      verbose: process.argv.includes('--verbose'),
    });
    process.exitCode = exitCode;
  } catch (e) {
    if (e instanceof PrerequisiteError) exitForPrerequisite(e, 'the VS Code extension tests');
    throw e;
  } finally {
    model.stop();
    fs.rmSync(box.root, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
