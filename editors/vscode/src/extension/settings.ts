// The extension's settings, read and checked in one place: a bad value is reported with
// the setting's name and what to put there instead.

import * as vscode from 'vscode';
import { SidecarError } from '../core/errors';
import type { NewChannelParams } from '../core/protocol.generated';

export interface Settings {
  /** `shared`: the per-user daemon (`claude-sidecar connect`), whose chats outlive the window. */
  daemon: 'private' | 'shared';
  daemonCommand: string[];
  cliPath: string;
  env: Record<string, string>;
  model: string;
  permissionMode: NonNullable<NewChannelParams['permissionMode']>;
  allowDangerouslySkipPermissions: boolean;
  autoAllowTools: string[];
  /** Entries per page of a long chat (the daemon's transcriptPaging); 0: every entry at once. */
  pageEntries: number;
}

/** The modes the setting offers (and a reloaded chat may come back in). */
export const PERMISSION_MODES = ['default', 'acceptEdits', 'plan', 'bypassPermissions'] as const;

/** Splits a command line on spaces, keeping "quoted" or 'quoted' arguments whole. */
export function splitCommand(line: string): string[] {
  const args: string[] = [];
  const pattern = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (const m of line.matchAll(pattern)) args.push(m[1] ?? m[2] ?? m[3] ?? '');
  return args;
}

/**
 * The daemon command for the chosen daemon: the private one serves on stdio (`--stdio`);
 * the shared one is reached through `connect`, so a `--stdio` in the command becomes
 * `connect` (the same program), and a command without it (`ssh devbox claude-sidecar
 * connect`) is taken as it is.
 */
export function daemonCommandFor(command: string[], daemon: Settings['daemon']): string[] {
  if (daemon === 'private') return command;
  return command.map((arg) => (arg === '--stdio' ? 'connect' : arg));
}

export function readSettings(): Settings {
  const c = vscode.workspace.getConfiguration('claudeSidecar');
  const daemon = c.get<string>('daemon', 'private');
  if (daemon !== 'private' && daemon !== 'shared') {
    throw new SidecarError(
      `claudeSidecar.daemon must be "private" or "shared" (got ${JSON.stringify(daemon)})`,
      'claudeSidecar.daemon',
    );
  }
  const raw = c.get<unknown>('daemonCommand', 'claude-sidecar --stdio');
  let daemonCommand: string[];
  if (typeof raw === 'string') daemonCommand = splitCommand(raw);
  else if (Array.isArray(raw) && raw.every((a) => typeof a === 'string')) daemonCommand = raw;
  else
    throw new SidecarError(
      'claudeSidecar.daemonCommand must be a string or an array of strings, e.g. "claude-sidecar --stdio"',
      'claudeSidecar.daemonCommand',
    );
  if (daemonCommand.length === 0) {
    throw new SidecarError(
      'claudeSidecar.daemonCommand is empty: set it to e.g. "claude-sidecar --stdio"',
      'claudeSidecar.daemonCommand',
    );
  }
  const env = c.get<Record<string, unknown>>('env', {});
  for (const [k, v] of Object.entries(env)) {
    if (typeof v !== 'string') {
      throw new SidecarError(`claudeSidecar.env.${k} must be a string (got ${JSON.stringify(v)})`, 'claudeSidecar.env');
    }
  }
  const mode = c.get<string>('permissionMode', 'default');
  if (!(PERMISSION_MODES as readonly string[]).includes(mode)) {
    throw new SidecarError(
      `claudeSidecar.permissionMode must be one of ${PERMISSION_MODES.join(', ')} (got ${mode})`,
      'claudeSidecar.permissionMode',
    );
  }
  const pageEntries = c.get<unknown>('pageEntries', 100);
  if (typeof pageEntries !== 'number' || !Number.isInteger(pageEntries) || pageEntries < 0) {
    throw new SidecarError(
      `claudeSidecar.pageEntries must be a whole number, 0 or more (got ${JSON.stringify(pageEntries)})`,
      'claudeSidecar.pageEntries',
    );
  }
  return {
    daemon,
    daemonCommand: daemonCommandFor(daemonCommand, daemon),
    cliPath: c.get<string>('cliPath', '').trim(),
    env: env as Record<string, string>,
    model: c.get<string>('model', '').trim(),
    permissionMode: mode as Settings['permissionMode'],
    allowDangerouslySkipPermissions: c.get<boolean>('allowDangerouslySkipPermissions', false),
    autoAllowTools: c.get<string[]>('autoAllowTools', []),
    pageEntries,
  };
}
