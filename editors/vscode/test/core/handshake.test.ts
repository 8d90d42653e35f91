// The version handshake: the protocol the extension states in `initialize`, the one error a
// daemon it does not fit answers (shown with the fix), the daemon's optional features (those
// it leaves out are hidden, and say so when used all the same) and the options it ignored.
// First against a stand-in daemon that answers `initialize` as each test says, then against
// the real daemon.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SidecarClient } from '../../src/core/client';
import { DaemonConnection } from '../../src/core/connection';
import { SidecarError } from '../../src/core/errors';
import {
  CHECK_FOR_UPDATES,
  COPY_FIX,
  ignoredOptionsWarning,
  mismatchPrompt,
  protocolMismatch,
  ProtocolMismatchError,
  UPGRADE_DAEMON,
} from '../../src/core/handshake';
import {
  DAEMON_VERSION,
  FEATURE_NAMES,
  PROTOCOL_VERSION,
  type ChannelSummary,
  type InitializeResult,
} from '../../src/core/protocol.generated';
import { fakeDaemon } from './fake-daemon';
import { client, removeSandbox, sandbox, startModel, startShared, type Model } from './harness';
import { SCENARIO } from './scenario';

/** A daemon's `initialize` answer with these features and ignored options. */
function answer(features: string[], ignoredOptions: string[] = []): InitializeResult {
  return {
    serverInfo: { name: 'claude-sidecar', version: '9.9.9' },
    capabilities: {
      experimental: {
        claudeSidecar: {
          protocolVersion: PROTOCOL_VERSION,
          oldestClientProtocol: PROTOCOL_VERSION,
          features,
          ignoredOptions,
          methods: [],
          notifications: [],
          clientRequests: [],
          cli: {
            path: '/opt/claude',
            source: 'PATH',
            version: '2.1.330',
            tested: true,
            testedVersions: ['2.1.330'],
            error: null,
          },
        },
      },
    },
  };
}

/** The daemon's protocolMismatch error, as the wire carries it. */
function mismatch(upgrade: 'client' | 'daemon', fix: string): { code: number; message: string; data: unknown } {
  const message =
    upgrade === 'client'
      ? `This claude-sidecar daemon (9.9.9, protocol 7) no longer serves clients of protocol ${PROTOCOL_VERSION} (the oldest it serves is 5): upgrade vscode: ${fix}`
      : `vscode needs a claude-sidecar daemon of protocol ${PROTOCOL_VERSION} or newer; this daemon (0.0.9) speaks protocol 0: upgrade claude-sidecar: ${fix}`;
  return {
    code: -32016,
    message,
    data: {
      name: 'protocolMismatch',
      upgrade,
      daemonProtocol: upgrade === 'client' ? 7 : 0,
      oldestClientProtocol: upgrade === 'client' ? 5 : 0,
      clientProtocol: PROTOCOL_VERSION,
      clientOldest: PROTOCOL_VERSION,
      daemonVersion: upgrade === 'client' ? '9.9.9' : '0.0.9',
      fix,
    },
  };
}

/** What a daemon from before the handshake answers a client that sends `protocol`. */
const OLD_DAEMON_REFUSAL = {
  code: -32602,
  message:
    'invalid params: `initializationOptions.protocol` is not a known parameter; remove it or check its spelling; see initialize in docs/protocol.md',
  data: { name: 'invalidParams', field: 'initializationOptions.protocol' },
};

function recordFile(): string {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-fake-')), 'received.jsonl');
}

/** Starts a fake daemon answering `initialize` so; the error it rejects with. */
async function startRejected(error: unknown): Promise<SidecarError> {
  const fake = fakeDaemon({ error }, recordFile());
  const failed = await DaemonConnection.start({ command: fake.command, initializationOptions: {} }).then(
    () => assert.fail('the start succeeded'),
    (e: unknown) => e,
  );
  assert.ok(failed instanceof SidecarError, String(failed));
  return failed;
}

describe('the version handshake, against a stand-in daemon', () => {
  test('initialize carries the protocol the extension speaks, the oldest daemon protocol it works with, its name and version', async () => {
    const fake = fakeDaemon({ result: answer([...FEATURE_NAMES]) }, recordFile());
    const daemon = await DaemonConnection.start({
      command: fake.command,
      initializationOptions: { coalesceDeltasMs: 16 },
    });
    await daemon.dispose();
    const initialize = fake.received().find((m) => m.method === 'initialize');
    const options = (initialize?.params as { initializationOptions: Record<string, unknown> }).initializationOptions;
    assert.deepEqual(options, {
      coalesceDeltasMs: 16,
      protocol: {
        version: PROTOCOL_VERSION,
        oldest: PROTOCOL_VERSION,
        client: { name: 'vscode', version: DAEMON_VERSION },
      },
    });
  });

  test('a daemon too new for the extension: one error saying to upgrade the extension, and a look for its update', async () => {
    const fix = "update the claude-sidecar extension in VS Code's Extensions view, then reload";
    const error = await startRejected(mismatch('client', fix));

    assert.ok(error instanceof ProtocolMismatchError);
    assert.equal(error.upgrade, 'client');
    assert.equal(error.fix, fix);
    assert.equal(error.daemonVersion, '9.9.9');
    const prompt = mismatchPrompt(error);
    assert.match(
      prompt.text,
      /^Claude: This claude-sidecar daemon \(9\.9\.9, protocol 7\) no longer serves clients of protocol/,
    );
    assert.ok(prompt.text.endsWith(`upgrade vscode: ${fix}`), prompt.text);
    assert.deepEqual(prompt.actions, [CHECK_FOR_UPDATES]);
    assert.equal(prompt.command, fix);
  });

  test('a daemon too old for the extension: one error saying to upgrade the daemon, its command to copy', async () => {
    const fix = 'uv tool upgrade claude-sidecar';
    const error = await startRejected(mismatch('daemon', fix));

    assert.ok(error instanceof ProtocolMismatchError);
    assert.equal(error.upgrade, 'daemon');
    const prompt = mismatchPrompt(error);
    assert.match(
      prompt.text,
      /^Claude: vscode needs a claude-sidecar daemon of protocol \d+ or newer; .* upgrade claude-sidecar: uv tool upgrade claude-sidecar$/,
    );
    assert.deepEqual(prompt.actions, [COPY_FIX]);
    assert.equal(prompt.command, fix);
  });

  test('a daemon from before the handshake, refusing the protocol option, means the same: upgrade the daemon (uv or pipx)', async () => {
    const error = await startRejected(OLD_DAEMON_REFUSAL);

    assert.ok(error instanceof ProtocolMismatchError);
    assert.equal(error.upgrade, 'daemon');
    assert.equal(error.fix, UPGRADE_DAEMON);
    assert.equal(error.daemonVersion, undefined);
    const prompt = mismatchPrompt(error);
    assert.match(prompt.text, /older than the extension needs/);
    assert.match(prompt.text, /uv tool upgrade claude-sidecar \(or pipx upgrade claude-sidecar\)/);
    assert.doesNotMatch(prompt.text, /not a known parameter/);
    assert.deepEqual(prompt.actions, [COPY_FIX]);
  });

  test('any other invalidParams of initialize stays what it is', async () => {
    const error = await startRejected({
      code: -32602,
      message: 'invalid params: `initializationOptions.coalesceDeltasMs` must be <= 1000',
      data: { name: 'invalidParams', field: 'initializationOptions.coalesceDeltasMs' },
    });

    assert.ok(!(error instanceof ProtocolMismatchError));
    assert.equal(protocolMismatch(error), undefined);
    assert.equal(error.errorName, 'invalidParams');
  });

  test('a feature the daemon does not list is not the client’s: attaching says so, without asking the daemon', async () => {
    const fake = fakeDaemon({ result: answer(['fork', 'rewind', 'editorTools']) }, recordFile());
    const sidecar = new SidecarClient({ command: fake.command, shared: true });
    try {
      await sidecar.daemon();
      assert.deepEqual([...(sidecar.features ?? [])].sort(), ['editorTools', 'fork', 'rewind']);
      const channel: ChannelSummary = {
        channelId: 'ch-1',
        sessionId: 's-1',
        cwd: '/tmp',
        state: 'idle',
        model: null,
        permissionMode: null,
        clients: [],
      } as unknown as ChannelSummary;
      await assert.rejects(
        sidecar.attachChat(channel),
        /needs a claude-sidecar daemon that serves "attach"; this one \(9\.9\.9\) does not/,
      );
      assert.ok(!fake.received().some((m) => m.method === 'claude/attach'), 'claude/attach was never sent');
    } finally {
      await sidecar.dispose();
    }
  });

  test('initializationOptions the daemon ignored are logged once, at warning, by name', async () => {
    const fake = fakeDaemon({ result: answer([...FEATURE_NAMES], ['initializationOptions.newerThing']) }, recordFile());
    const lines: [string, string][] = [];
    const sidecar = new SidecarClient({ command: fake.command, log: (level, message) => lines.push([level, message]) });
    try {
      await sidecar.daemon();
      const warnings = lines.filter(([level, m]) => level === 'warn' && m.includes('initializationOptions.newerThing'));
      assert.equal(warnings.length, 1, JSON.stringify(lines));
    } finally {
      await sidecar.dispose();
    }
    assert.equal(ignoredOptionsWarning(answer([])), undefined, 'nothing ignored: no warning');
  });
});

describe('what the extension hides', () => {
  test('Attach, Fork and Rewind leave the palette while the daemon lacks their feature (a key the extension sets)', () => {
    // out/test/core -> editors/vscode
    const manifest = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../../package.json'), 'utf8')) as {
      contributes: { menus: { commandPalette: { command: string; when?: string }[] } };
    };
    const when = new Map(manifest.contributes.menus.commandPalette.map((m) => [m.command, m.when]));
    for (const [command, feature] of [
      ['claudeSidecar.attach', 'attach'],
      ['claudeSidecar.fork', 'fork'],
      ['claudeSidecar.rewind', 'rewind'],
    ] as const) {
      assert.ok((FEATURE_NAMES as readonly string[]).includes(feature), `${feature} is a feature of the protocol`);
      assert.equal(when.get(command), `!claudeSidecar.daemonLacks.${feature}`, command);
    }
  });
});

describe('the version handshake, against the real daemon', () => {
  let model: Model;
  before(async () => {
    model = await startModel(SCENARIO, fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-model-')));
  });
  after(async () => model.stop());

  test('the daemon takes the protocol and answers its own, with the features of a private daemon', async () => {
    const box = sandbox(model);
    const sidecar = client(box);
    try {
      const result = (await sidecar.daemon()).initializeResult!;
      const handshake = result.capabilities.experimental.claudeSidecar;
      assert.equal(handshake.protocolVersion, PROTOCOL_VERSION);
      assert.deepEqual(handshake.ignoredOptions, [], 'protocol is an option the daemon knows');
      const features = [...(sidecar.features ?? [])];
      assert.ok(features.includes('fork') && features.includes('rewind'), features.join());
      assert.ok(!features.includes('attach'), 'a private daemon serves no attach');
    } finally {
      await sidecar.dispose();
      removeSandbox(box);
    }
  });

  test('the shared daemon lists attach', async () => {
    const box = sandbox(model);
    const shared = await startShared(box);
    const sidecar = client(box, { command: shared.connect, shared: true });
    try {
      await sidecar.daemon();
      assert.ok(sidecar.features?.has('attach'), [...(sidecar.features ?? [])].join());
    } finally {
      await sidecar.dispose();
      await shared.stop();
      removeSandbox(box);
    }
  });

  test('a client needing a newer daemon than this one gets one protocolMismatch: upgrade the daemon, with the command', async () => {
    const box = sandbox(model);
    const newer = PROTOCOL_VERSION + 1;
    const sidecar = client(box, {
      initializationOptions: {
        protocol: { version: newer, oldest: newer, client: { name: 'vscode', version: '99.0.0' } },
      },
    });
    try {
      const error = await sidecar.daemon().then(
        () => assert.fail('the daemon accepted a client it does not fit'),
        (e: unknown) => e,
      );
      assert.ok(error instanceof ProtocolMismatchError, String(error));
      assert.equal(error.upgrade, 'daemon');
      // The command of the way this daemon was installed (a checkout here: git pull and bootstrap.py).
      assert.ok(error.fix.length > 0);
      assert.ok(error.message.includes(`upgrade claude-sidecar: ${error.fix}`), error.message);
      assert.deepEqual(mismatchPrompt(error).actions, [COPY_FIX]);
      assert.equal(sidecar.state, 'failed');
      assert.equal(sidecar.lastFailure, error);
    } finally {
      await sidecar.dispose();
      removeSandbox(box);
    }
  });
  test('a client older than the daemon serves gets one protocolMismatch: upgrade the extension, and a look for its update', async () => {
    const box = sandbox(model);
    const sidecar = client(box, {
      initializationOptions: { protocol: { version: 0, client: { name: 'vscode', version: '0.0.1' } } },
    });
    try {
      const error = await sidecar.daemon().then(
        () => assert.fail('the daemon accepted a client older than it serves'),
        (e: unknown) => e,
      );
      assert.ok(error instanceof ProtocolMismatchError, String(error));
      assert.equal(error.upgrade, 'client');
      assert.match(error.fix, /extension/);
      const prompt = mismatchPrompt(error);
      assert.ok(prompt.text.endsWith(`upgrade vscode: ${error.fix}`), prompt.text);
      assert.deepEqual(prompt.actions, [CHECK_FOR_UPDATES]);
    } finally {
      await sidecar.dispose();
      removeSandbox(box);
    }
  });
});
