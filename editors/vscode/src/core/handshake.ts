// The version handshake (docs/protocol.md, "Versions: the handshake"): the protocol this
// client states in `initialize`, the one error a daemon it does not fit answers (which side
// to upgrade, and the command), and the optional features the daemon serves the connection.

import { SidecarError } from './errors';
import {
  DAEMON_VERSION,
  PROTOCOL_VERSION,
  type ClientProtocol,
  type FEATURE_NAMES,
  type InitializeResult,
} from './protocol.generated';

/** The oldest daemon protocol this client works with: the one it was built against. */
export const OLDEST_DAEMON_PROTOCOL = PROTOCOL_VERSION;

/** This client's name in the handshake (the daemon's upgrade message names it). */
export const CLIENT_NAME = 'vscode';

/** The command that upgrades the daemon, for a daemon from before the handshake (which cannot say it). */
export const UPGRADE_DAEMON = 'uv tool upgrade claude-sidecar';
const UPGRADE_DAEMON_PIPX = 'pipx upgrade claude-sidecar';

/** An optional feature a daemon may serve a connection. */
export type Feature = (typeof FEATURE_NAMES)[number];

/**
 * `initializationOptions.protocol`: the protocol this client speaks and the oldest daemon
 * protocol it works with. The extension ships in step with the daemon (release/versions.py),
 * so the version of the schema it was generated from is its own.
 */
export function protocolOffer(clientVersion: string = DAEMON_VERSION): ClientProtocol {
  return {
    version: PROTOCOL_VERSION,
    oldest: OLDEST_DAEMON_PROTOCOL,
    client: { name: CLIENT_NAME, version: clientVersion },
  };
}

/** The side a mismatch asks the user to upgrade. */
export type UpgradeSide = 'client' | 'daemon';

/**
 * The daemon and this client do not fit: `initialize` failed with `protocolMismatch`, or a
 * daemon from before the handshake refused `initializationOptions.protocol`. The message says
 * which side to upgrade; `fix` is the command that does it.
 */
export class ProtocolMismatchError extends SidecarError {
  constructor(
    message: string,
    /** Which side to upgrade. */
    readonly upgrade: UpgradeSide,
    /** The command that upgrades it. */
    readonly fix: string,
    /** The daemon's version; undefined for a daemon from before the handshake. */
    readonly daemonVersion: string | undefined,
    cause: SidecarError,
  ) {
    super(message, 'initialize', { cause, code: cause.code, errorName: 'protocolMismatch', data: cause.data });
    this.name = 'ProtocolMismatchError';
  }
}

/** The mismatch an `initialize` error means, or undefined for any other error. */
export function protocolMismatch(error: SidecarError): ProtocolMismatchError | undefined {
  if (error instanceof ProtocolMismatchError) return error;
  const data = (error.data ?? {}) as Record<string, unknown>;
  if (error.errorName === 'protocolMismatch') {
    const upgrade: UpgradeSide = data.upgrade === 'client' ? 'client' : 'daemon';
    const fix = typeof data.fix === 'string' ? data.fix : upgrade === 'daemon' ? UPGRADE_DAEMON : '';
    const version = typeof data.daemonVersion === 'string' ? data.daemonVersion : undefined;
    return new ProtocolMismatchError(error.message, upgrade, fix, version, error);
  }
  // A daemon from before the handshake knows no `protocol` option, and says only that.
  if (error.errorName === 'invalidParams' && data.field === 'initializationOptions.protocol') {
    return new ProtocolMismatchError(
      `This claude-sidecar daemon is older than the extension needs (it predates protocol ${OLDEST_DAEMON_PROTOCOL}): ` +
        `upgrade claude-sidecar: ${UPGRADE_DAEMON} (or ${UPGRADE_DAEMON_PIPX}), then run "Claude: Restart the Daemon".`,
      'daemon',
      UPGRADE_DAEMON,
      undefined,
      error,
    );
  }
  return undefined;
}

export const COPY_FIX = 'Copy Command';
export const CHECK_FOR_UPDATES = 'Check for Extension Updates';

export interface MismatchPrompt {
  /** The notification: which side to upgrade, and how (the daemon's words). */
  text: string;
  /** The buttons, in order. */
  actions: string[];
  /** The daemon's fix: what `Copy Command` copies. */
  command: string;
}

/**
 * The one notification a mismatch is shown as, with the fix: for a daemon too old, a button
 * that copies the command that upgrades it; for an extension too old (the daemon's fix says
 * to update it in the Extensions view), a button that looks for its update there.
 */
export function mismatchPrompt(error: ProtocolMismatchError): MismatchPrompt {
  const actions = error.upgrade === 'client' ? [CHECK_FOR_UPDATES] : error.fix ? [COPY_FIX] : [];
  return { text: `Claude: ${error.message}`, actions, command: error.fix };
}

/** The optional features the daemon serves this connection. */
export function daemonFeatures(result: InitializeResult): ReadonlySet<string> {
  return new Set(result.capabilities.experimental.claudeSidecar.features);
}

/** The log line for `initializationOptions` the daemon ignored (keys it does not know); undefined when none. */
export function ignoredOptionsWarning(result: InitializeResult): string | undefined {
  const ignored = result.capabilities.experimental.claudeSidecar.ignoredOptions;
  if (!ignored.length) return undefined;
  return (
    `claude-sidecar ${result.serverInfo.version} ignored initializationOptions it does not know: ${ignored.join(', ')} ` +
    '(a daemon older than the extension; upgrade it for them to apply)'
  );
}

/**
 * A request of `feature` on a daemon that does not serve it: what a hidden command says when
 * it is run all the same (a keybinding, or before the daemon said).
 */
export function featureMissing(feature: Feature, what: string, result: InitializeResult): SidecarError {
  return new SidecarError(
    `${what} needs a claude-sidecar daemon that serves "${feature}"; this one (${result.serverInfo.version}) does not ` +
      `(features: ${[...daemonFeatures(result)].join(', ') || 'none'})`,
    'daemon',
  );
}
