#!/usr/bin/env node
// The Claude Chats view as a user sees it, for the README (docs/chats-view.png): the built
// extension in code-server's VS Code, in headless Chromium, on a git repository where three
// chats were started the way a user starts them ("Claude: New Chat in Worktree..." from the
// palette, the task typed, the worktree's name taken as offered), each in a worktree of its
// own: two have changed files (new files allowed: permission mode acceptEdits), the third asks
// to run a command and waits. Checks what the rows, the waiting chat's tooltip and a row's
// inline buttons say, and that Review opens the multi-file diff editor; the tooltip and the
// review are saved in test-artifacts/chats-view/. The webviews are served from a site of their
// own, each page in a renderer process of its own, as VS Code desktop and vscode.dev run them
// (code-server's way, the workbench's origin and thread, is the other UI runs'). The test
// command runs it as its `ui-chats`
// step (with --out in test-artifacts: docs/chats-view.png is made by hand).
//
//   node test/vscode/chats-view-shot.mjs [--out FILE]
// Needs `npm run build`, the toolchain (scripts/toolchain.sh) and `uv sync` at the root.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { exitForPrerequisite, PrerequisiteError, sleep, VSCODE_DIR } from '../host/common.mjs';
import {
  closeWorkbench,
  openWorkbench,
  runCommand,
  screenshot,
  startCodeServer,
  webviewRenderers,
} from '../host/ui.mjs';
import { sandbox, startModel } from './run.mjs';

const OUT = process.argv.includes('--out')
  ? path.resolve(process.argv[process.argv.indexOf('--out') + 1])
  : path.join(VSCODE_DIR, 'docs', 'chats-view.png');
const ARTIFACTS = path.join(VSCODE_DIR, 'test-artifacts', 'chats-view');

/** The three tasks, in the order they are started, and what the stand-in model does for each. */
const TASKS = [
  {
    task: 'Validate the email field of the signup form',
    steps: [
      [
        { text: 'I will check the address before the form is sent.' },
        {
          tool_use: {
            name: 'Write',
            input: {
              file_path: '{cwd}/app/signup.py',
              content:
                'import re\n\nEMAIL = re.compile(r"^[^@\\s]+@[^@\\s]+\\.[a-z]{2,}$", re.I)\n\n\n' +
                'def signup(form):\n    email = form["email"].strip()\n    if not EMAIL.match(email):\n' +
                '        raise ValueError(f"not an email address: {email!r}")\n    return {"email": email}\n',
            },
          },
        },
      ],
      [
        {
          tool_use: {
            name: 'Write',
            input: {
              file_path: '{cwd}/tests/test_signup.py',
              content:
                'import pytest\n\nfrom app.signup import signup\n\n\ndef test_rejects_a_name_without_domain():\n' +
                '    with pytest.raises(ValueError):\n        signup({"email": "ada"})\n',
            },
          },
        },
      ],
      [{ text: 'The form now refuses an address without a domain; a test says so.' }],
    ],
  },
  {
    task: 'Rename load_config to read_settings everywhere',
    steps: [
      [
        {
          tool_use: {
            name: 'Write',
            input: {
              file_path: '{cwd}/app/config.py',
              content:
                'import json\n\n\ndef read_settings(path):\n    with open(path) as f:\n        return json.load(f)\n',
            },
          },
        },
      ],
      [{ text: 'Renamed; nothing else called it.' }],
    ],
  },
  {
    task: 'Run the test suite and fix what fails',
    steps: [
      [
        { text: 'Let me run the tests first.' },
        { tool_use: { name: 'Bash', input: { command: 'python -m pytest -q', description: 'Run the test suite' } } },
      ],
      [{ text: 'All green.' }],
    ],
  },
];

function scenario(dir) {
  const rules = TASKS.map(({ task, steps }) => ({
    match: `^${task.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`,
    steps,
  }));
  const file = path.join(dir, 'chats-view.scenario.json');
  fs.writeFileSync(file, JSON.stringify({ rules, chunk: 8, delay: 0.01 }));
  return file;
}

/** A small project under git, the user's checkout the chats branch off. */
function project(dir) {
  const files = {
    'app/__init__.py': '',
    'app/signup.py': 'def signup(form):\n    return {"email": form["email"]}\n',
    'app/config.py':
      'import json\n\n\ndef load_config(path):\n    with open(path) as f:\n        return json.load(f)\n',
    'README.md': '# shop\n',
  };
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  const git = (...args) => execFileSync('git', args, { cwd: dir });
  git('init', '-q', '-b', 'main');
  git('config', 'user.name', 'Ada');
  git('config', 'user.email', 'ada@example.com');
  git('add', '.');
  git('commit', '-q', '-m', 'The shop');
}

/** Whether a chat page shows `text` in its conversation (VS Code nests each page in two iframes). */
async function chatShows(page, text) {
  for (const frame of page.frames()) {
    const hits = await frame
      .locator('.entry', { hasText: text })
      .count()
      .catch(() => 0);
    if (hits) return true;
  }
  return false;
}

/** "Claude: New Chat in Worktree...": the task typed into the first box, the name offered taken;
 * resolves once the chat's page shows the task (a page that opens takes the focus: typing before
 * it would go to its prompt). */
async function newChatInWorktree(page, task) {
  await runCommand(page, 'Claude: New Chat in Worktree...');
  const box = page.locator('.quick-input-widget');
  await box.locator('.quick-input-title', { hasText: '(1/2)' }).waitFor({ timeout: 15_000 });
  await box.locator('input').first().fill(task);
  await box.locator('input').first().press('Enter');
  await box.locator('.quick-input-title', { hasText: '(2/2)' }).waitFor({ timeout: 15_000 });
  await box.locator('input').first().press('Enter');
  await box.waitFor({ state: 'hidden', timeout: 15_000 });
  const deadline = Date.now() + 30_000;
  while (!(await chatShows(page, task))) {
    if (Date.now() > deadline) throw new Error(`the chat of "${task}" did not open`);
    await sleep(200);
  }
}

/** The rows of the Claude Chats view, as their text reads. */
async function rows(page) {
  return page.locator('[id="workbench.view.extension.claudeSidecar"] .monaco-list-row').allInnerTexts();
}

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'chats-view-shot-'));
  const model = await startModel(scenario(tmp));
  const box = sandbox(model.url);
  fs.rmSync(path.join(box.workspace, 'hello.py'));
  project(box.workspace);
  const slim = path.join(tmp, 'extension');
  for (const part of ['package.json', 'dist', 'media']) {
    fs.cpSync(path.join(VSCODE_DIR, part), path.join(slim, part), {
      recursive: true,
      filter: (p) => !p.endsWith('.vsix') && !p.endsWith('.map'),
    });
  }
  let server;
  let page;
  try {
    server = await startCodeServer({
      extensionDir: slim,
      workspace: box.workspace,
      settings: { ...box.settings, 'claudeSidecar.permissionMode': 'acceptEdits' },
    });
    // The webviews on a site of their own, as VS Code desktop and vscode.dev serve them (the
    // other UI runs take code-server's way: on the workbench's origin and thread).
    page = await openWorkbench(server.url, { webviewSite: true });
    for (const { task } of TASKS) await newChatInWorktree(page, task);
    // The chat page in view (the others' tabs are hidden: VS Code lets their pages go) runs in
    // a renderer process of its own: an out-of-process frame on its site.
    assert.equal((await webviewRenderers(page)).length, 1, 'the chat page in view runs in a renderer of its own');
    // The badge on the icon takes the pointer's events: the click goes to the icon through it.
    await page.locator('.activitybar [aria-label^="Claude Chats"]').first().click({ force: true });
    const deadline = Date.now() + 60_000;
    for (;;) {
      const seen = await rows(page);
      if (
        seen.length === 3 &&
        seen.filter((r) => /waiting/.test(r)).length === 1 &&
        seen.filter((r) => /\+\d/.test(r)).length === 2
      )
        break;
      if (Date.now() > deadline) throw new Error(`the view did not show the three chats: ${JSON.stringify(seen)}`);
      await sleep(300);
    }
    // The side bar a little wider than VS Code's default, as a user who keeps this view open
    // makes it: the rows read whole.
    const side = await page.locator('.part.sidebar').boundingBox();
    if (side) {
      const x = side.x + side.width + 2;
      await page.mouse.move(x, 400);
      await page.mouse.down();
      await page.mouse.move(x + 160, 400, { steps: 8 });
      await page.mouse.up();
    }
    // The mouse away from the rows and the tabs: nothing hovered in the picture.
    await page.mouse.move(700, 790);
    await page.keyboard.press('Escape');
    await sleep(1000);
    const shown = await rows(page);
    console.log(`rows: ${JSON.stringify(shown, null, 1)}`);
    // The waiting chat first, saying what it asks; the others in the order they were started,
    // with what they changed.
    assert.match(shown[0] ?? '', /^run-the-test-suite\s*waiting: Bash · /);
    assert.match(shown[1] ?? '', /^validate-the-email-field\s*\+17 −1 in 2 files · /);
    assert.match(shown[2] ?? '', /^rename-load-config-to\s*\+1 −1 in 1 file · /);
    await screenshot(page, OUT);
    console.log(`saved ${OUT}`);
    const row = (name) =>
      page.locator('[id="workbench.view.extension.claudeSidecar"] .monaco-list-row', { hasText: name }).first();
    await row('run-the-test-suite').locator('.label-name').hover();
    const tooltip = page.locator('.workbench-hover:visible, .monaco-hover:visible', { hasText: 'Branch' }).first();
    await tooltip.waitFor({ timeout: 10_000 });
    // VS Code writes some of its spaces as no-break spaces.
    const tip = (await tooltip.innerText()).replace(/[^\S\n]/g, ' ');
    console.log(`tooltip: ${JSON.stringify(tip)}`);
    assert.match(tip, /^run-the-test-suite — waiting for your answer/);
    assert.match(tip, /Asks: Bash — Run the test suite/);
    assert.match(tip, /Branch worktree-run-the-test-suite, from main: no changes yet/);
    assert.match(tip, /Last prompt: Run the test suite and fix what fails/);
    await screenshot(page, path.join(ARTIFACTS, 'tooltip.png'));
    // The inline buttons the pointer over a row shows; Review opens the multi-file diff editor.
    const changed = row('validate-the-email-field');
    await changed.hover();
    const buttons = await changed
      .locator('.action-label')
      .evaluateAll((a) => a.map((e) => e.getAttribute('aria-label')));
    assert.deepEqual(buttons, ['Review Changes', 'Merge...', 'Discard Worktree...']);
    await changed.locator('.action-label[aria-label="Review Changes"]').click();
    await page
      .locator('.tab.active', { hasText: 'worktree-validate-the-email-field vs main (+17 −1)' })
      .waitFor({ timeout: 15_000 });
    await page.locator('.multiDiffEntry, .monaco-diff-editor').first().waitFor({ timeout: 15_000 });
    await screenshot(page, path.join(ARTIFACTS, 'review.png'));
    console.log('# the Chats view run passed');
  } catch (e) {
    if (page) console.error(`the page then: ${await screenshot(page, path.join(ARTIFACTS, 'failure.png'))}`);
    throw e;
  } finally {
    await closeWorkbench(page);
    await server?.stop();
    model.stop();
    fs.rmSync(box.root, { recursive: true, force: true });
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

try {
  await main();
} catch (e) {
  if (e instanceof PrerequisiteError) exitForPrerequisite(e, 'the Chats view screenshot');
  else throw e;
}
