// One running daemon: its process and the JSON-RPC connection over its stdio.
//
// Moves messages and types them; knows nothing about chats (see client.ts). No `vscode`
// import: the same code runs in the extension host and in plain `node --test`.

import { spawn, type ChildProcess } from 'node:child_process';
import {
  createMessageConnection,
  Emitter,
  ResponseError,
  StreamMessageReader,
  StreamMessageWriter,
  type Disposable,
  type Event,
  type MessageConnection,
} from 'vscode-jsonrpc/node';
import { SidecarError, toSidecarError } from './errors';
import { protocolMismatch, protocolOffer } from './handshake';
import type {
  ClaudeClientRequests,
  ClaudeMethods,
  ClaudeNotifications,
  InitializationOptions,
  InitializeResult,
} from './protocol.generated';

export type Log = (level: 'debug' | 'info' | 'warn' | 'error', message: string) => void;

export interface DaemonOptions {
  /** The command and its arguments, e.g. `['claude-sidecar', '--stdio']`. */
  command: string[];
  /** The daemon's working directory. */
  cwd?: string;
  /** The whole environment of the daemon (and so of its CLIs). */
  env?: NodeJS.ProcessEnv;
  /** Sent as they are, with `protocol` (this client's, `protocolOffer()`) unless given. */
  initializationOptions: InitializationOptions;
  /** For the daemon's stderr lines and connection trouble. */
  log?: Log;
}

/** How a daemon process ended. */
export interface DaemonExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** True when `dispose()` asked it to end. */
  expected: boolean;
  /** Its last stderr lines, for the message a user sees. */
  stderrTail: string[];
}

type NotificationHandler = <M extends keyof ClaudeNotifications>(method: M, params: ClaudeNotifications[M]) => void;
type ClientRequestHandler<M extends keyof ClaudeClientRequests> = (
  params: ClaudeClientRequests[M]['params'],
) => Promise<ClaudeClientRequests[M]['result']>;

const STDERR_TAIL_LINES = 20;

/** The level of one of the daemon's log lines (`<date> <time> LEVEL logger: message`). */
export function daemonLineLevel(line: string): 'debug' | 'info' | 'warn' | 'error' {
  const level = /^\S+ \S+ (DEBUG|INFO|WARNING|ERROR|CRITICAL) /.exec(line)?.[1];
  if (level === 'ERROR' || level === 'CRITICAL') return 'error';
  if (level === 'WARNING') return 'warn';
  if (level === 'INFO') return 'info';
  // Tracebacks and other unprefixed lines belong to the record before them; debug keeps them findable.
  return 'debug';
}
const SHUTDOWN_GRACE_MS = 3000;

/** A started and initialized daemon. */
export class DaemonConnection {
  private readonly exitEmitter = new Emitter<DaemonExit>();
  /** Fires once, when the process has ended (after `dispose()` too). */
  readonly onExit: Event<DaemonExit> = this.exitEmitter.event;
  private readonly stderrTail: string[] = [];
  private disposing = false;
  private exited: DaemonExit | undefined;
  private rejectExited: (e: SidecarError) => void = () => {};
  /** Rejects when the process ends: raced against every pending request. */
  private readonly exitedEarly: Promise<never>;
  initializeResult: InitializeResult | undefined;

  private constructor(
    private readonly child: ChildProcess,
    private readonly rpc: MessageConnection,
    private readonly log: Log,
  ) {
    this.exitedEarly = new Promise<never>((_, reject) => (this.rejectExited = reject));
    this.exitedEarly.catch(() => {});
  }

  /**
   * Spawns the daemon, sends `initialize` and resolves once it answered. Rejects with a
   * SidecarError (the command could not be started, the daemon exited, or it refused the
   * initialization options; a ProtocolMismatchError when it and this client do not fit) and
   * leaves no process behind.
   */
  static async start(options: DaemonOptions): Promise<DaemonConnection> {
    const log: Log = options.log ?? (() => {});
    const [program, ...args] = options.command;
    if (!program) {
      throw new SidecarError('daemonCommand is empty: set it to e.g. ["claude-sidecar", "--stdio"]', 'daemonCommand');
    }
    const child = spawn(program, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const spawned = new Promise<void>((resolve, reject) => {
      child.once('spawn', () => resolve());
      child.once('error', (e: NodeJS.ErrnoException) => {
        const hint =
          e.code === 'ENOENT'
            ? `${program} was not found: install claude-sidecar, or set daemonCommand to its full path (e.g. /path/to/.venv/bin/claude-sidecar --stdio)`
            : e.message;
        reject(
          new SidecarError(`cannot start the daemon \`${options.command.join(' ')}\`: ${hint}`, 'daemonCommand', {
            cause: e,
          }),
        );
      });
    });
    await spawned;
    const rpc = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
    const daemon = new DaemonConnection(child, rpc, log);
    daemon.watch();
    rpc.listen();
    try {
      const initialize = rpc.sendRequest<InitializeResult>('initialize', {
        processId: process.pid,
        clientInfo: { name: 'claude-sidecar-vscode' },
        capabilities: {},
        initializationOptions: {
          ...options.initializationOptions,
          protocol: options.initializationOptions.protocol ?? protocolOffer(),
        },
      });
      daemon.initializeResult = await Promise.race([initialize, daemon.exitedEarly]);
      await rpc.sendNotification('initialized', {});
    } catch (e) {
      daemon.kill();
      const error = toSidecarError(e, 'initialize');
      throw protocolMismatch(error) ?? error;
    }
    return daemon;
  }

  /** The daemon's process id. */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Whether the process still runs. */
  get alive(): boolean {
    return this.exited === undefined;
  }

  /** Sends a typed claude/* request; daemon errors reject as SidecarError. */
  async request<M extends keyof ClaudeMethods>(
    method: M,
    params: ClaudeMethods[M]['params'],
  ): Promise<ClaudeMethods[M]['result']> {
    if (this.exited) throw new SidecarError('the daemon is not running', 'daemon');
    try {
      return await Promise.race([this.rpc.sendRequest<ClaudeMethods[M]['result']>(method, params), this.exitedEarly]);
    } catch (e) {
      throw toSidecarError(e, method);
    }
  }

  /** Calls `handler` for every claude/* notification, in the order they arrive. */
  onNotification(handler: NotificationHandler): Disposable {
    return this.rpc.onNotification((method: string, params: unknown) => {
      if (method.startsWith('claude/')) {
        handler(method as keyof ClaudeNotifications, params as never);
      }
    });
  }

  /** Serves one kind of request the daemon sends the client. */
  onClientRequest<M extends keyof ClaudeClientRequests>(method: M, handler: ClientRequestHandler<M>): Disposable {
    return this.rpc.onRequest(method, async (params: ClaudeClientRequests[M]['params']) => {
      try {
        return await handler(params);
      } catch (e) {
        const message = e instanceof Error ? e.message : String(e);
        return new ResponseError(-32603, message);
      }
    });
  }

  /**
   * Ends the daemon: `shutdown` and `exit` (it closes its channels and their CLIs), then
   * SIGTERM and SIGKILL if it does not go within a few seconds. Resolves once it is gone.
   */
  async dispose(): Promise<void> {
    if (this.exited) return;
    this.disposing = true;
    const gone = new Promise<void>((resolve) => this.onExit(() => resolve()));
    const timer = setTimeout(() => this.kill(), SHUTDOWN_GRACE_MS);
    try {
      await Promise.race([this.rpc.sendRequest('shutdown'), gone]);
      await this.rpc.sendNotification('exit');
    } catch {
      // A daemon that cannot answer shutdown is killed by the timer.
    }
    this.child.stdin?.end();
    await gone;
    clearTimeout(timer);
  }

  /** Kills the process at once (SIGKILL); its CLIs die with it (they run with PDEATHSIG). */
  kill(): void {
    this.disposing = true;
    if (!this.exited) this.child.kill('SIGKILL');
  }

  private watch(): void {
    let partial = '';
    this.child.stderr!.setEncoding('utf8');
    this.child.stderr!.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        if (!line) continue;
        this.stderrTail.push(line);
        if (this.stderrTail.length > STDERR_TAIL_LINES) this.stderrTail.shift();
        this.log(daemonLineLevel(line), `daemon: ${line}`);
      }
    });
    // Writes to a daemon that just died fail with EPIPE; the exit handler reports it.
    this.child.stdin!.on('error', (e) => this.log('debug', `daemon stdin: ${e.message}`));
    this.rpc.onError(([e]) => this.log('warn', `daemon connection: ${e.message}`));
    this.child.once('close', (code, signal) => {
      this.exited = { code, signal, expected: this.disposing, stderrTail: [...this.stderrTail] };
      this.log(this.disposing ? 'info' : 'error', `daemon exited (code ${code}, signal ${signal})`);
      const tail = this.exited.stderrTail.slice(-3).join(' | ');
      this.rejectExited(
        new SidecarError(`the daemon exited (code ${code}, signal ${signal})${tail ? `: ${tail}` : ''}`, 'daemon'),
      );
      this.rpc.dispose();
      this.exitEmitter.fire(this.exited);
    });
  }
}
