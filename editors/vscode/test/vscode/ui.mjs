#!/usr/bin/env node
// The UI run: the packaged extension (.vsix) installed into code-server, used the way a
// person does in Chromium: command palette -> "Claude: New Chat" -> type a prompt in the
// chat -> the answer streams -> a permission card with the diff -> "Review in diff editor"
// -> Allow -> an answer with highlighted code -> "Open diff" shows the change in VS Code's
// diff editor. Twice on the way every visible text of the chat is measured for WCAG AA
// contrast in Dark Modern, Light Modern and Light High Contrast, the second time in Dark
// High Contrast too (switched through "Preferences: Color Theme"). Screenshots
// of each state go to test-artifacts/ui/ (look at them).
//
//   node test/vscode/ui.mjs [--verbose]
// Needs: `npm run package` (dist/claude-sidecar.vsix), the toolchain, `uv sync` at the root.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { exitForPrerequisite, PrerequisiteError, sleep, VSCODE_DIR } from '../host/common.mjs';
import { lowContrast } from '../host/contrast.mjs';
import { closeWorkbench, openWorkbench, runCommand, screenshot, startCodeServer } from '../host/ui.mjs';
import { sandbox, startModel } from './run.mjs';

const VSIX = path.join(VSCODE_DIR, 'dist', 'claude-sidecar.vsix');
const SHOTS = path.join(VSCODE_DIR, 'test-artifacts', 'ui');
const verbose = process.argv.includes('--verbose');

/** The chat webview's inner frame (VS Code nests the page in two iframes). */
async function chatFrame(page, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const frame of page.frames()) {
      if (
        await frame
          .locator('textarea.prompt')
          .count()
          .catch(() => 0)
      )
        return frame;
    }
    if (Date.now() > deadline) throw new Error('the chat webview did not show a prompt box');
    await sleep(200);
  }
}

/** Waits until a diff editor shows a line with `text` (its content has rendered). */
async function diffShows(page, text) {
  await page.locator('.monaco-diff-editor .view-line', { hasText: text }).first().waitFor({ timeout: 15_000 });
}

async function waitFor(probe, what, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await sleep(200);
  }
}

/** Waits until `read()` gives `expected` (what the page shows may come a moment after the rest of
 * it: a restored chat's pickers and header follow its transcript), then asserts it, so a value
 * that never comes fails with the last one read. */
async function settlesOn(read, expected, what, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  let last = await read();
  while (last !== expected && Date.now() < deadline) {
    await sleep(200);
    last = await read();
  }
  assert.equal(last, expected, what);
}

/** "Developer: Reload Window", as a user runs it, and waits for the workbench to be back.
 * A palette that is still open with the command after the Enter lost that key (ci46: no
 * reload in 30 s, the run failed): the command is picked again, as a user would. */
async function reloadWindow(page) {
  const reloaded = page.waitForEvent('framenavigated', { predicate: (f) => f === page.mainFrame(), timeout: 60_000 });
  await runCommand(page, 'Developer: Reload Window');
  const palette = page.locator('.quick-input-widget');
  for (let again = 0; again < 3; again++) {
    const stillOpen = await palette
      .locator('input')
      .first()
      .inputValue({ timeout: 1000 })
      .then((text) => text.includes('Reload Window') && palette.isVisible())
      .catch(() => false);
    if (!stillOpen) break;
    await page.keyboard.press('Enter');
    await sleep(1000);
  }
  await reloaded;
  await page.waitForSelector('.monaco-workbench .part.statusbar', { timeout: 60_000 });
}

/** Switches the workbench to `theme` the way a user does (Preferences: Color Theme) and waits
 * until the chat shows it. */
async function useTheme(page, chat, theme) {
  // The theme the page was told of (VS Code sets it on the page's body with the theme's
  // colours): Light Modern and Light High Contrast have the same background.
  const shown = () => chat.evaluate(() => document.body.dataset.vscodeThemeId ?? '');
  const before = await shown();
  await runCommand(page, 'Preferences: Color Theme');
  const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: theme }).first();
  await page.keyboard.type(theme);
  await row.waitFor({ timeout: 10_000 });
  await page.keyboard.press('Enter');
  await waitFor(async () => (await shown()) !== before, `the chat in the ${theme} theme`);
}

/** The chat's texts below WCAG AA contrast once the theme's colours settled: VS Code may send
 * a theme's colours to the page in more than one message (ci48 read the warning text of Light
 * Modern mixed with a colour not yet updated: 4.27). Read again for up to 10 s while any text
 * is low; a colour that stays low is still reported. */
async function settledContrast(chat) {
  const deadline = Date.now() + 10_000;
  let low = await lowContrast(chat);
  while (low.length && Date.now() < deadline) {
    await sleep(250);
    low = await lowContrast(chat);
  }
  return low;
}

/** Checks that every text of the chat reads well (WCAG AA) in Dark Modern (the run's theme) and
 * in each of `themes` (screenshot `<shot>-<theme>.png` each), then goes back to Dark Modern. */
async function readableInThemes(page, chat, shot, themes) {
  assert.deepEqual(await settledContrast(chat), [], 'texts below WCAG AA contrast in Dark Modern');
  try {
    for (const theme of themes) {
      await useTheme(page, chat, theme);
      assert.deepEqual(await settledContrast(chat), [], `texts below WCAG AA contrast in ${theme}`);
      await screenshot(page, `${shot}-${theme.toLowerCase().replaceAll(' ', '-')}.png`);
    }
  } finally {
    await useTheme(page, chat, 'Dark Modern');
  }
}

async function step(name, run) {
  const started = Date.now();
  await run();
  console.log(`ok - ${name} (${Date.now() - started} ms)`);
}

async function main() {
  if (!fs.existsSync(VSIX)) throw new Error(`${VSIX} is missing: run \`npm run package\` first`);
  fs.rmSync(SHOTS, { recursive: true, force: true });
  const model = await startModel(path.join(VSCODE_DIR, 'test', 'scenario.json'));
  const box = sandbox(model.url);
  // VS Code's default; the theme checks switch to the light one and back.
  box.settings['workbench.colorTheme'] = 'Default Dark Modern';
  let server;
  let page;
  try {
    server = await startCodeServer({ extensionVsix: VSIX, workspace: box.workspace, settings: box.settings, verbose });
    page = await openWorkbench(server.url);
    let chat;
    await step('"Claude: New Chat" from the command palette opens the chat beside the open file', async () => {
      await page.getByRole('treeitem', { name: 'hello.py' }).first().click();
      await page
        .locator('.monaco-editor .view-line', { hasText: "print('hello')" })
        .first()
        .waitFor({ timeout: 15_000 });
      await runCommand(page, 'Claude: New Chat');
      chat = await chatFrame(page);
      await chat.locator('textarea.prompt').waitFor({ state: 'visible' });
      // The host gives the new chat's prompt the focus (the page takes none by itself).
      await waitFor(
        () => chat.locator('textarea.prompt').evaluate((el) => el === document.activeElement && document.hasFocus()),
        "the new chat's prompt has the focus",
        30_000,
      );
    });
    await step('a prompt typed and sent streams its answer into the chat', async () => {
      await page.keyboard.type('hello there');
      await page.keyboard.press('Enter');
      await chat.getByText('Hello from the stand-in model.').first().waitFor({ timeout: 30_000 });
      await screenshot(page, path.join(SHOTS, '1-answer.png'));
    });
    await step('an edit asks permission with its diff in the card', async () => {
      await chat.locator('textarea.prompt').click();
      await page.keyboard.type('greet the world');
      await page.keyboard.press('Enter');
      const card = chat.locator('.permission-card').first();
      await card.waitFor({ timeout: 30_000 });
      const text = await card.innerText();
      assert.match(text, /print\('hello, world'\)/, 'the card shows the proposed line');
      await screenshot(page, path.join(SHOTS, '2-permission-card.png'));
    });
    await step(
      'the chat with a permission card reads well in the dark, light and light high-contrast themes',
      async () => {
        await readableInThemes(page, chat, path.join(SHOTS, '2-permission-card'), [
          'Light Modern',
          'Light High Contrast',
        ]);
      },
    );
    await step('"Review in diff editor" opens the proposed edit in VS Code\'s diff editor', async () => {
      await chat
        .getByRole('button', { name: /review/i })
        .first()
        .click();
      await diffShows(page, "print('hello, world')");
      await screenshot(page, path.join(SHOTS, '3-review-diff.png'));
    });
    await step('Allow runs the edit: the file changes on disk', async () => {
      chat = await chatFrame(page);
      await chat
        .getByRole('button', { name: /^allow$/i })
        .first()
        .click();
      const file = path.join(box.workspace, 'hello.py');
      const deadline = Date.now() + 30_000;
      while (fs.readFileSync(file, 'utf8') !== "print('hello, world')\n") {
        if (Date.now() > deadline) throw new Error('hello.py was not changed');
        await sleep(200);
      }
      await chat.getByText('Greeting changed.').first().waitFor({ timeout: 30_000 });
      await screenshot(page, path.join(SHOTS, '4-allowed.png'));
    });
    await step('an answer with code shows it highlighted, in a block with a copy button', async () => {
      await chat.locator('textarea.prompt').click();
      await page.keyboard.type('write a code sample');
      await page.keyboard.press('Enter');
      const block = chat.locator('.code-block').first();
      await block.waitFor({ timeout: 30_000 });
      // Coloured with ranges of its text (CSS custom highlights), not elements. The block is
      // looked up each time: while the answer streams, its unfinished part (the block with it)
      // is drawn anew, and a handle taken then would name an element no longer shown (ci88).
      await chat.waitForFunction(
        () => {
          const el = document.querySelector('.code-block');
          return !!el && [...(CSS.highlights.get('code-keyword') ?? [])].some((r) => el.contains(r.startContainer));
        },
        null,
        { timeout: 15_000 },
      );
      assert.match(await block.innerText(), /class Greeter/);
    });
    await step(
      'the finished turns (a thought opened, highlighted code) read well in the dark, light and both high-contrast themes',
      async () => {
        await chat.getByText('Thought').first().click();
        // In the screenshots: the code block's end (its plain text, its tokens, the inline code after it).
        await chat.getByText('python sample.py').scrollIntoViewIfNeeded();
        await readableInThemes(page, chat, path.join(SHOTS, '4-allowed'), [
          'Light Modern',
          'Dark High Contrast',
          'Light High Contrast',
        ]);
      },
    );
    await step('"Open diff" of the change shows it in the diff editor', async () => {
      await chat
        .getByRole('button', { name: /open diff/i })
        .first()
        .click();
      await page.locator('.tab.active', { hasText: "Claude's change" }).first().waitFor({ timeout: 15_000 });
      await diffShows(page, "print('hello, world')");
      await screenshot(page, path.join(SHOTS, '5-change-diff.png'));
    });
    await step('"Send Selection to Chat" quotes the selected lines into the prompt', async () => {
      await page.getByRole('treeitem', { name: 'hello.py' }).first().dblclick();
      const line = page
        .locator('.monaco-editor:not(.monaco-diff-editor .monaco-editor) .view-line', { hasText: 'hello, world' })
        .first();
      await line.waitFor({ timeout: 15_000 });
      await line.click();
      await page.keyboard.press('Home');
      await page.keyboard.press('Shift+End');
      await runCommand(page, 'Claude: Send Selection to Chat');
      chat = await chatFrame(page);
      const prompt = chat.locator('textarea.prompt');
      await waitFor(async () => /@hello\.py:1/.test(await prompt.inputValue()), 'the prompt quotes hello.py:1');
      assert.match(await prompt.inputValue(), /print\('hello, world'\)/);
      await screenshot(page, path.join(SHOTS, '6-selection-in-prompt.png'));
      await prompt.fill('');
    });
    /** The option a picker under the prompt shows ('(hidden)' when it is not shown). */
    const picked = (label) =>
      chat
        .locator(`select[aria-label="${label}"]`)
        .evaluate((s) => (s.hidden ? '(hidden)' : (s.selectedOptions[0]?.textContent ?? '')));
    await step("the permission mode, model and effort picked under the prompt are the chat's", async () => {
      // Plan mode, not the setting's default: the reloaded chat must come back in it. The
      // page keeps it when the daemon's claude/status says so, which comes before the answer
      // to the mode (the model's two round trips below start after that answer is sent).
      await chat.locator('select[aria-label="Permission mode"]').selectOption({ label: 'Plan mode' });
      // A picker waits for the host's answer, which comes once it has the channel's new info.
      const answered = () => chat.locator('select[aria-label="Effort"]:not([disabled])').waitFor({ timeout: 15_000 });
      await chat.locator('select[aria-label="Model"]').selectOption({ label: 'Sonnet' });
      await answered();
      await chat.locator('select[aria-label="Effort"]').selectOption({ label: 'high effort' });
      await answered();
      // The pickers settle on the chat's values: under load a claude/status sent before the
      // model's answer can reach the page after the pick and show the old model until the
      // status after the answer comes (seen once at load 13). A value that never comes fails.
      await settlesOn(() => picked('Model'), 'Sonnet', 'the model picker');
      await settlesOn(() => picked('Effort'), 'high effort', 'the effort picker');
      await settlesOn(() => picked('Permission mode'), 'Plan mode', 'the permission mode picker');
    });
    await step(
      'the chat tab comes back with its conversation, mode, model, effort, cost and meter after the window reloads',
      async () => {
        // The header's context meter and cost once the last turn ended (they come with its turnEnded).
        const facts = chat.locator('.header-facts');
        await waitFor(
          async () => /context.*\$\d/s.test(await facts.innerText()),
          'the meter and cost of the live chat',
        );
        const live = await facts.innerText();
        // As a user does it: the workbench saves its layout (the chat tab with its state) on the way out.
        await reloadWindow(page);
        chat = await chatFrame(page, 60_000);
        await chat.getByText('Greeting changed.').first().waitFor({ timeout: 30_000 });
        await settlesOn(() => picked('Model'), 'Sonnet', "the model picker comes back with the chat's model");
        await settlesOn(() => picked('Effort'), 'high effort', "the effort picker comes back with the chat's effort");
        await settlesOn(
          () => picked('Permission mode'),
          'Plan mode',
          "the mode picker comes back with the chat's mode, not the setting's",
        );
        await settlesOn(
          () => chat.locator('.header-facts').innerText(),
          live,
          'the meter and cost come back as they were',
        );
        // The edit's diff, which the resumed chat's stored entries do not have: the page kept it.
        const write = chat.locator('.entry.tool', { hasText: 'hello.py' }).first();
        await write.locator('.tool-files .diff').waitFor({ timeout: 15_000 });
        assert.match(await write.locator('.tool-files .diff').innerText(), /print\('hello, world'\)/);
        assert.equal(await write.getByRole('button', { name: 'Open file' }).count(), 1);
        await screenshot(page, path.join(SHOTS, '7-restored-after-reload.png'));
      },
    );
    await step('"Resume a Past Session..." lists the session; the one open here shows its tab', async () => {
      await runCommand(page, 'Claude: Resume a Past Session');
      const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: 'hello there' }).first();
      await row.waitFor({ timeout: 15_000 });
      // The chat webview takes focus back after the palette closes (at its own pace, on a loaded
      // machine after the picker shows): the picker must stay open through that.
      await chat.locator('textarea.prompt').click();
      await sleep(300);
      assert.ok(await row.isVisible(), 'the session picker stays open when the chat takes focus');
      await screenshot(page, path.join(SHOTS, '8-sessions.png'));
      await row.click();
      await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 15_000 });
      // The chat tab that has the session (a second tab would be a second view of the same chat).
      const activeGroup = page.locator('.editor-group-container.active');
      await waitFor(
        async () => (await activeGroup.locator('.tab.active', { hasText: 'Claude: hello there' }).count()) === 1,
        'the chat tab with the session is in front',
      );
      assert.equal(await page.locator('.tab', { hasText: 'Claude: hello there' }).count(), 1);
    });
    await step('a reload with two chat tabs leaves the user in the one they were in', async () => {
      // A second chat, a tab beside the first in its group; the user goes back to the first
      // chat: restoring the tabs one by one must not end in the one revived last.
      await runCommand(page, 'Claude: New Chat');
      await waitFor(async () => (await page.locator('.tab', { hasText: /^Claude$/ }).count()) === 1, 'a new chat tab');
      await waitFor(async () => {
        for (const frame of page.frames()) {
          const prompt = frame.locator('textarea.prompt');
          if ((await prompt.count().catch(() => 0)) && !(await frame.getByText('Greeting changed.').count())) {
            await prompt.fill('hello again');
            await prompt.press('Enter');
            return true;
          }
        }
        return false;
      }, 'the new chat page');
      await waitFor(
        async () => (await page.locator('.tab', { hasText: 'Claude: hello again' }).count()) === 1,
        'the second chat has its title',
        30_000,
      );
      const first = page.locator('.tab', { hasText: 'Claude: hello there' });
      await first.click();
      const activeGroup = page.locator('.editor-group-container.active');
      await waitFor(
        async () => (await activeGroup.locator('.tab.active', { hasText: 'Claude: hello there' }).count()) === 1,
        'the first chat is the active tab',
      );
      const groupOf = () =>
        page
          .locator('.editor-group-container')
          .evaluateAll((gs) => gs.findIndex((g) => g.classList.contains('active')));
      const before = await groupOf();
      await screenshot(page, path.join(SHOTS, '9-two-chats-before-reload.png'));
      await reloadWindow(page);
      // Both chats back, the one in front with its page drawn.
      await waitFor(
        async () => {
          for (const frame of page.frames()) {
            if (
              (await frame
                .locator('textarea.prompt')
                .count()
                .catch(() => 0)) &&
              (await frame.getByText('Greeting changed.').count())
            )
              return true;
          }
          return false;
        },
        'the chat page in front is shown',
        60_000,
      );
      // The workbench brings the tabs back, then the focus, at its own pace.
      await settlesOn(
        () => page.locator('.tab', { hasText: 'Claude: hello again' }).count(),
        1,
        'the other one is a tab',
      );
      await settlesOn(groupOf, before, 'the group the user was in is the active one');
      await settlesOn(
        () => activeGroup.locator('.tab.active', { hasText: 'Claude: hello there' }).count(),
        1,
        'the chat the user was in is the active tab',
      );
      await screenshot(page, path.join(SHOTS, '10-two-chats-after-reload.png'));
    });
    console.log(`# UI run passed; screenshots in ${path.relative(process.cwd(), SHOTS)}`);
  } catch (e) {
    if (page) await screenshot(page, path.join(SHOTS, 'failure.png')).catch(() => {});
    throw e;
  } finally {
    await closeWorkbench(page);
    await server?.stop();
    model.stop();
    fs.rmSync(box.root, { recursive: true, force: true });
  }
}

try {
  await main();
} catch (e) {
  if (e instanceof PrerequisiteError) exitForPrerequisite(e, 'the VS Code UI run');
  console.error(`not ok - ${e.stack ?? e}`);
  process.exitCode = 1;
}
