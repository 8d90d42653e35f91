// The daemon's facts about its CLI, as the extension reports them.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { cliReport } from '../../src/core/cli-report';
import type { CliInfo, InitializeResult } from '../../src/core/protocol.generated';

function result(cli: Partial<CliInfo>): InitializeResult {
  return {
    serverInfo: { name: 'claude-sidecar', version: '0.1.0' },
    capabilities: {
      experimental: {
        claudeSidecar: {
          protocolVersion: 1,
          oldestClientProtocol: 1,
          features: [],
          ignoredOptions: [],
          methods: [],
          notifications: [],
          clientRequests: [],
          cli: {
            path: '/opt/claude',
            source: 'PATH',
            version: '2.1.330',
            tested: true,
            testedVersions: ['2.1.233', '2.1.330'],
            error: null,
            ...cli,
          },
        },
      },
    },
  };
}

describe('the CLI report', () => {
  test('names the daemon, the CLI version and where it was found', () => {
    assert.deepEqual(cliReport(result({})), {
      level: 'info',
      text: 'claude-sidecar 0.1.0 runs Claude Code 2.1.330 from /opt/claude (PATH)',
    });
  });

  test('warns about a version the tests do not cover, naming those they do', () => {
    const report = cliReport(result({ version: '2.0.1', tested: false }));
    assert.equal(report.level, 'warn');
    assert.match(report.text, /2\.0\.1 .* not cover \(tested: 2\.1\.233, 2\.1\.330\)/);
  });

  test('is an error when no CLI can run', () => {
    const report = cliReport(result({ error: 'no Claude Code CLI found', path: null, version: null, tested: null }));
    assert.equal(report.level, 'error');
    assert.match(report.text, /no Claude Code CLI found .*doctor/);
  });
});
