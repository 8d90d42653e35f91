// Minimal extension for the harness self-test: one command that writes a file and shows a message.
'use strict';
const vscode = require('vscode');
const fs = require('fs');
const path = require('path');

/** Where the command writes: $SIDECAR_FIXTURE_OUT, else <first workspace folder>/fixture-output.json. */
function outputPath() {
  if (process.env.SIDECAR_FIXTURE_OUT) return process.env.SIDECAR_FIXTURE_OUT;
  const folder = vscode.workspace.workspaceFolders && vscode.workspace.workspaceFolders[0];
  if (!folder) throw new Error('sidecar fixture: no workspace folder and no SIDECAR_FIXTURE_OUT');
  return path.join(folder.uri.fsPath, 'fixture-output.json');
}

function activate(context) {
  console.log('[fixture] activated');
  context.subscriptions.push(
    vscode.commands.registerCommand('sidecarFixture.writeFile', async () => {
      const file = outputPath();
      const record = {
        ranAt: new Date().toISOString(),
        pid: process.pid,
        // Environment the extension host sees (the harness passes these through the server).
        env: {
          SIDECAR_FIXTURE_ENV: process.env.SIDECAR_FIXTURE_ENV || null,
          CLAUDE_SIDECAR_CLI: process.env.CLAUDE_SIDECAR_CLI || null,
          ANTHROPIC_BASE_URL: process.env.ANTHROPIC_BASE_URL || null,
        },
      };
      fs.writeFileSync(file, JSON.stringify(record, null, 2) + '\n');
      console.log(`[fixture] wrote ${file}`);
      vscode.window.showInformationMessage(`Sidecar fixture wrote ${path.basename(file)}`);
      return file;
    }),
  );
}

function deactivate() {}

module.exports = { activate, deactivate };
