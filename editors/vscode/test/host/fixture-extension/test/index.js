// Extension test index for the extension-test route (see ../../README.md).
// The server's extension host require()s this file and calls run(testsRoot, callback):
// a returned promise that resolves = exit code 0, rejects = exit code 1 (the callback form is also accepted).
'use strict';
const assert = require('assert');
const fs = require('fs');
const vscode = require('vscode');

const EXT_ID = 'claude-sidecar.sidecar-host-fixture';

async function run() {
  const results = [];
  const test = async (name, fn) => {
    try {
      await fn();
      results.push([name, null]);
      console.log(`  ok   ${name}`);
    } catch (err) {
      results.push([name, err]);
      console.log(`  FAIL ${name}: ${(err && err.stack) || err}`);
    }
  };

  await test('fixture extension is present', async () => {
    const ext = vscode.extensions.getExtension(EXT_ID);
    assert.ok(ext, `${EXT_ID} not found`);
  });

  await test('--env reaches the extension host', async () => {
    assert.strictEqual(process.env.SIDECAR_FIXTURE_ENV, 'from-harness');
  });

  await test('command runs and writes its file', async () => {
    const file = await vscode.commands.executeCommand('sidecarFixture.writeFile');
    assert.ok(typeof file === 'string', `command returned ${file}`);
    const record = JSON.parse(fs.readFileSync(file, 'utf8'));
    assert.strictEqual(record.env.SIDECAR_FIXTURE_ENV, 'from-harness');
    assert.ok(vscode.extensions.getExtension(EXT_ID).isActive, 'extension not active after its command');
  });

  await test('workspace folder is the one passed with --workspace', async () => {
    const folders = vscode.workspace.workspaceFolders || [];
    assert.strictEqual(folders.length, 1);
    if (process.env.SIDECAR_FIXTURE_WORKSPACE) {
      assert.strictEqual(folders[0].uri.fsPath, process.env.SIDECAR_FIXTURE_WORKSPACE);
    }
  });

  const failed = results.filter(([, err]) => err);
  console.log(`${results.length - failed.length} passing, ${failed.length} failing`);
  if (failed.length)
    throw new Error(`${failed.length} of ${results.length} tests failed: ${failed.map(([n]) => n).join('; ')}`);
}

module.exports = { run };
