// What the daemon says, in `initialize`, about the Claude Code CLI it will run (the same
// facts as `claude-sidecar doctor`): a line for the log, and whether the user must hear.

import type { InitializeResult } from './protocol.generated';

export interface CliReport {
  /** `error`: no CLI will start; `warn`: a CLI version the daemon is not tested with. */
  level: 'info' | 'warn' | 'error';
  text: string;
}

export function cliReport(result: InitializeResult): CliReport {
  const daemon = `claude-sidecar ${result.serverInfo.version}`;
  const cli = result.capabilities.experimental.claudeSidecar.cli;
  if (cli.error) {
    return {
      level: 'error',
      text: `${daemon}: no Claude Code CLI can run: ${cli.error} (run \`claude-sidecar doctor\`)`,
    };
  }
  const where = `${cli.path ?? '?'}${cli.source ? ` (${cli.source})` : ''}`;
  const version = cli.version ?? 'an unknown version';
  if (cli.tested === false) {
    return {
      level: 'warn',
      text: `${daemon} runs Claude Code ${version} from ${where}, which its tests do not cover (tested: ${cli.testedVersions.join(', ')}); most things work, some may not.`,
    };
  }
  return { level: 'info', text: `${daemon} runs Claude Code ${version} from ${where}` };
}
