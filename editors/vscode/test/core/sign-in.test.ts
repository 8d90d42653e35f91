// A chat whose CLI has no credentials, against the real daemon and CLI (an own HOME, no key
// in the environment): the turn's error becomes one notification with the fix and a button
// that runs the sign-in command.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import type { SidecarClient } from '../../src/core/client';
import { API_KEY, COPY_COMMAND, SIGN_IN, signInPrompt } from '../../src/core/sign-in';
import { client, Recorder, removeSandbox, sandbox, startModel, type Model, type Sandbox } from './harness';
import { SCENARIO } from './scenario';

let model: Model;
let box: Sandbox;
let sidecar: SidecarClient;

before(async () => {
  model = await startModel(SCENARIO, fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-model-')));
});
after(async () => model.stop());

beforeEach(() => {
  box = sandbox(model);
  // No model and no key: the CLI has no credentials at all.
  delete box.env.ANTHROPIC_BASE_URL;
  delete box.env.ANTHROPIC_API_KEY;
  sidecar = client(box);
});

afterEach(async () => {
  await sidecar.dispose();
  removeSandbox(box);
});

describe('signing in', () => {
  test('a chat without credentials shows one error with the fix and a Sign In button', async () => {
    const chat = await sidecar.openChat({ cwd: box.workspace });
    const rec = new Recorder(chat);

    const ended = await rec.turn('hello');

    assert.equal(ended.outcome, 'error');
    const prompts = rec.events.flatMap((e) => signInPrompt(e) ?? []);
    assert.equal(prompts.length, 1, 'one notification per turn');
    const prompt = prompts[0]!;
    assert.match(prompt.text, /^Claude: Claude Code has no credentials; sign in with a Claude account: run `/);
    assert.match(prompt.text, /ANTHROPIC_API_KEY/);
    assert.doesNotMatch(prompt.text, /Please run \/login/);
    assert.deepEqual(prompt.actions, [SIGN_IN, API_KEY, COPY_COMMAND]);
    assert.match(prompt.command ?? '', / login$/);
    assert.ok(prompt.text.includes(`\`${prompt.command}\``), 'the button runs the command the message names');
    assert.equal(prompt.apiKeyCommand, `${prompt.command} --api-key`);
  });
});
