// The "Claude Sidecar" output channel: the extension's log and the daemon's stderr.

import * as vscode from 'vscode';
import type { Log } from '../core/connection';

export type Logger = Pick<vscode.LogOutputChannel, 'debug' | 'info' | 'warn' | 'error' | 'show'> & vscode.Disposable;

export function createLogger(): Logger {
  return vscode.window.createOutputChannel('Claude Sidecar', { log: true });
}

/** The core's log function, writing to the output channel. */
export function coreLog(logger: Logger): Log {
  return (level, message) => logger[level](message);
}
