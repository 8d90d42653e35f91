// One error type for everything the client reports: daemon errors (JSON-RPC, with the
// daemon's `data.name`), a daemon that is not running, and bad settings.

import { ResponseError } from 'vscode-jsonrpc/node';
import type { ErrorName } from './protocol.generated';

export class SidecarError extends Error {
  /**
   * @param where what failed: a method name (`claude/sendMessage`), a setting
   *   (`daemonCommand`) or `daemon` for a daemon that is not running
   * @param code the JSON-RPC error code, when the daemon answered with an error
   * @param errorName the daemon's `data.name` (`channelNotFound`, `invalidParams`, ...)
   * @param data the error's whole `data`
   */
  constructor(
    message: string,
    readonly where: string,
    options: { cause?: unknown; code?: number; errorName?: ErrorName | (string & {}); data?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'SidecarError';
    this.code = options.code;
    this.errorName = options.errorName;
    this.data = options.data;
  }

  readonly code: number | undefined;
  /** `string & {}`: any name, while editors still offer the known ones. */
  readonly errorName: ErrorName | (string & {}) | undefined;
  readonly data: unknown;
}

/** A SidecarError for anything a request rejected with. */
export function toSidecarError(e: unknown, where: string): SidecarError {
  if (e instanceof SidecarError) return e;
  if (e instanceof ResponseError) {
    const data = e.data as { name?: string } | undefined;
    return new SidecarError(e.message, where, {
      cause: e,
      code: e.code,
      errorName: typeof data?.name === 'string' ? data.name : undefined,
      data: e.data,
    });
  }
  const message = e instanceof Error ? e.message : String(e);
  return new SidecarError(`${where}: ${message}`, where, { cause: e });
}
