"""The ``claude-sidecar`` command line."""

from __future__ import annotations

import argparse
import logging
import os
import sys

from claude_sidecar import __version__
from claude_sidecar.cli import priority
from claude_sidecar.cli.priority import DEFAULT_NICE, NICE_ENV

DESCRIPTION = """\
claude-sidecar embeds the Claude Code agent in editors. An editor plugin starts it
with --stdio and speaks LSP-style JSON-RPC (Content-Length framing) with claude/*
methods over stdin/stdout; see docs/protocol.md. stdout carries JSON-RPC only: logs go
to stderr, or to the file given with --log-file.
"""

EPILOG = """\
commands:
  claude-sidecar --stdio            serve one editor over stdin/stdout (what plugins run)
  claude-sidecar connect            the same over the shared per-user daemon: chats outlive
                                    the editor, several editors attach to one chat, and
                                    `ssh HOST claude-sidecar connect` runs them remotely
                                    (starts `claude-sidecar serve` when none runs)
  claude-sidecar serve [--socket PATH]
                                    the shared daemon on its private Unix socket
  claude-sidecar demo               play a scripted session against the real CLI and the
                                    built-in stand-in model: no API key needed
  claude-sidecar acp [--warm-pool N] [--warm-pool-cwd DIR]
                                    serve one ACP client (Zed, JetBrains, ...) over
                                    stdin/stdout: an Agent Client Protocol agent; see
                                    docs/acp.md
  claude-sidecar scripted-model     run the stand-in model (Anthropic Messages API) alone
  claude-sidecar login [--console | --sso] [--email ADDRESS] [--api-key]
                                    sign the CLI the daemon runs in to a Claude account (its
                                    own `auth login`, in this terminal); --api-key: how to
                                    use an API key instead
  claude-sidecar logout             sign that CLI out
  claude-sidecar doctor [--json]   which CLI would run (path, version, tested or not), how it
                                    authenticates (never a secret), where its files are
  claude-sidecar schema [--output FILE]
                                    print the JSON Schema of the claude/* protocol (what
                                    editor clients generate their types from)

The Claude Code CLI is looked up in this order: --cli, $CLAUDE_SIDECAR_CLI, `claude`
on PATH, the binary bundled in the claude-agent-sdk package, ~/.claude/local/claude.
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="claude-sidecar",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"claude-sidecar {__version__}")
    parser.add_argument(
        "--stdio",
        action="store_true",
        help="serve JSON-RPC on stdin/stdout (the mode editor plugins use)",
    )
    parser.add_argument("--cli", metavar="PATH", help="path of the Claude Code CLI binary")
    _add_cli_nice(
        parser,
        default=None,
        help="the CLIs' CPU niceness, their tools' too: below the editor's, so that a busy "
        f"machine draws the answer as it streams (0-19; 0: the daemon's; default: ${NICE_ENV}, "
        f"else {DEFAULT_NICE})",
    )
    parser.add_argument(
        "--log-file", metavar="PATH", help="append logs to this file instead of stderr"
    )
    parser.add_argument(
        "--log-level",
        default="INFO",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="default: INFO",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = sub.add_parser("demo", help="play a scripted session with the stand-in model")
    demo.add_argument("--prompt", help="one prompt to send instead of the demo's two")
    acp = sub.add_parser("acp", help="serve an Agent Client Protocol client on stdin/stdout")
    acp.add_argument(
        "--warm-pool",
        metavar="N",
        type=int,
        choices=range(9),
        default=1,
        help="spare CLIs kept started for the next session/new (0-8; default: 1)",
    )
    acp.add_argument(
        "--warm-pool-cwd",
        metavar="DIR",
        type=_directory,
        default=None,
        help="start a spare CLI in DIR at initialize, so that the first session/new there "
        "takes it (default: the directory the agent runs in; none when that is /)",
    )
    _add_cli_nice(acp)
    acp.add_argument(
        "--allow-dangerously-skip-permissions",
        action="store_true",
        help="offer the bypassPermissions mode (never the one a session starts in)",
    )
    acp.add_argument(
        "--cli",
        metavar="PATH",
        default=argparse.SUPPRESS,
        help="path of the Claude Code CLI binary",
    )
    serve = sub.add_parser("serve", help="run the shared per-user daemon on its Unix socket")
    connect = sub.add_parser(
        "connect", help="bridge stdin/stdout to the shared daemon (starting it if needed)"
    )
    for command in (serve, connect):
        command.add_argument(
            "--socket",
            metavar="PATH",
            default=None,
            help="the daemon's socket (default: $XDG_RUNTIME_DIR/claude-sidecar/daemon.sock, "
            "else claude-sidecar-UID/daemon.sock in the temp directory)",
        )
        command.add_argument(
            "--idle-close",
            metavar="SECONDS",
            type=float,
            default=1800.0,
            help="close a chat with no client attached and no turn running after this long "
            "(its session stays on disk; default: 1800)",
        )
        command.add_argument(
            "--linger",
            metavar="SECONDS",
            type=float,
            default=60.0,
            help="end the daemon after this long with no chat and no client (default: 60)",
        )
        command.add_argument(
            "--replay-window",
            metavar="MIB",
            type=float,
            default=4.0,
            help="notifications kept per chat for clients that re-attach (default: 4 MiB)",
        )
        command.add_argument(
            "--client-buffer",
            metavar="MIB",
            type=float,
            default=64.0,
            help="a client with this much unread must read within --client-stall seconds "
            "or be disconnected (default: 64 MiB)",
        )
        command.add_argument(
            "--client-stall",
            metavar="SECONDS",
            type=float,
            default=10.0,
            help="see --client-buffer (default: 10)",
        )
        command.add_argument(
            "--warm-pool",
            metavar="N",
            type=int,
            choices=range(9),
            default=1,
            help="spare CLIs kept started for the next new chat (0-8; default: 1)",
        )
        command.add_argument(
            "--cli", metavar="PATH", default=argparse.SUPPRESS, help="path of the CLI binary"
        )
        _add_cli_nice(command)
    connect.add_argument(
        "--daemon-log",
        metavar="PATH",
        default=None,
        help="where a daemon this command starts logs (default: "
        "$XDG_STATE_HOME/claude-sidecar/daemon.log, else ~/.local/state/...)",
    )
    status = sub.add_parser(
        "status", help="show the shared daemon's chats and the editors attached to them"
    )
    stop = sub.add_parser("stop", help="stop the shared daemon (refused while a chat is in a turn)")
    stop.add_argument("--force", action="store_true", help="stop it even while chats are in a turn")
    for command in (status, stop):
        command.add_argument(
            "--socket", metavar="PATH", default=None, help="the daemon's socket (as for serve)"
        )
    model = sub.add_parser("scripted-model", help="run the stand-in Messages API server")
    model.add_argument(
        "--scenario",
        metavar="FILE",
        help="scenario JSON (default: the demo scenario); see docs/scripted-model.md",
    )
    model.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (default: free)")
    doctor = sub.add_parser("doctor", help="check which CLI would run and how it authenticates")
    doctor.add_argument(
        "--json",
        action="store_true",
        help="print the report as JSON (DoctorReport in docs/protocol.md)",
    )
    # Also after the subcommand; SUPPRESS keeps a top-level --cli when this one is absent.
    doctor.add_argument(
        "--cli",
        metavar="PATH",
        default=argparse.SUPPRESS,
        help="check this CLI binary instead of the one the lookup finds",
    )
    login = sub.add_parser(
        "login", help="sign in the Claude Code CLI the daemon runs (its `auth login`)"
    )
    account = login.add_mutually_exclusive_group()
    account.add_argument(
        "--console",
        action="store_true",
        help="an Anthropic Console account (API usage billing) instead of a Claude plan",
    )
    account.add_argument("--sso", action="store_true", help="sign in with your company's SSO")
    login.add_argument("--email", metavar="ADDRESS", help="fill in the email on the login page")
    login.add_argument(
        "--api-key",
        action="store_true",
        help="print where to put ANTHROPIC_API_KEY instead (nothing is run)",
    )
    logout = sub.add_parser("logout", help="sign the Claude Code CLI the daemon runs out")
    for command in (login, logout):
        command.add_argument(
            "--cli", metavar="PATH", default=argparse.SUPPRESS, help="path of the CLI binary"
        )
    schema = sub.add_parser("schema", help="print the JSON Schema of the claude/* protocol")
    schema.add_argument(
        "--output",
        metavar="FILE",
        help="write it to FILE instead of stdout "
        "(the repository keeps it in docs/protocol.schema.json)",
    )
    return parser


def _configure_logging(level: str, log_file: str | None) -> None:
    handler: logging.Handler = (
        logging.FileHandler(log_file) if log_file else logging.StreamHandler(sys.stderr)
    )
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler], force=True)
    # pygls logs every message body at INFO; that is noise and costs time per delta.
    logging.getLogger("pygls").setLevel(max(logging.WARNING, logging.getLevelName(level)))


def _add_cli_nice(
    parser: argparse.ArgumentParser,
    default: object = argparse.SUPPRESS,
    help: str = "see claude-sidecar --cli-nice",
) -> None:
    """``--cli-nice N`` on ``parser``: the top level's, and the commands that start CLIs
    (given after the command, it overrides the top level's; unset, it leaves it)."""
    parser.add_argument(
        "--cli-nice", metavar="N", type=int, choices=range(20), default=default, help=help
    )


def _directory(value: str) -> str:
    """An existing directory, as an absolute path (argparse type: a typo is an error at
    start, not a spare that silently never starts)."""
    path = os.path.abspath(os.path.expanduser(value))
    if not os.path.isdir(path):
        raise argparse.ArgumentTypeError(f"no such directory: {value}")
    return path


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``claude-sidecar`` console script and ``python -m claude_sidecar``."""
    parser = _parser()
    args = parser.parse_args(argv)
    _configure_logging(args.log_level, args.log_file)
    if args.cli_nice is None:
        try:
            args.cli_nice = priority.nice_from(os.environ)
        except ValueError as e:
            parser.error(str(e))
    priority.configure(args.cli_nice)
    if args.command == "demo":
        from claude_sidecar.commands.demo import run_demo

        return run_demo(cli_path=args.cli, prompt=args.prompt)
    if args.command == "acp":
        from claude_sidecar.frontends.acp import serve_acp

        return serve_acp(
            cli_path=args.cli,
            warm_pool=args.warm_pool,
            warm_pool_cwd=args.warm_pool_cwd,
            allow_bypass=args.allow_dangerously_skip_permissions,
        )
    if args.command in ("serve", "connect", "status", "stop"):
        return _shared_daemon(args)
    if args.command == "scripted-model":
        from claude_sidecar.scripted import DEMO_SCENARIO_PATH, load_scenario
        from claude_sidecar.scripted.server import serve

        scenario = load_scenario(args.scenario or DEMO_SCENARIO_PATH)
        serve(scenario, "127.0.0.1", args.port)
        return 0
    if args.command == "doctor":
        import msgspec

        from claude_sidecar.cli.doctor import examine, render_text

        report = examine(args.cli)
        if args.json:
            sys.stdout.write(msgspec.json.encode(report).decode() + "\n")
        else:
            sys.stdout.write(render_text(report))
        return 1 if report.problems else 0
    if args.command in ("login", "logout"):
        from claude_sidecar.commands.login import API_KEY_GUIDE, run_auth

        if args.command == "logout":
            return run_auth("logout", cli_path=args.cli)
        if args.api_key:
            sys.stdout.write(API_KEY_GUIDE)
            return 0
        options = ["--console"] if args.console else ["--sso"] if args.sso else []
        if args.email:
            options.append(f"--email={args.email}")
        return run_auth("login", options, cli_path=args.cli)
    if args.command == "schema":
        from claude_sidecar.protocol.schema import build, render

        text = render(build())
        if args.output:
            try:
                with open(args.output, "w", encoding="utf-8") as out:
                    out.write(text)
            except OSError as e:
                print(f"claude-sidecar schema: cannot write {args.output}: {e}", file=sys.stderr)
                return 1
        else:
            sys.stdout.write(text)
        return 0
    if args.stdio:
        from claude_sidecar.frontends.server.server import build_server
        from claude_sidecar.frontends.server.stdio import serve_stdio

        return serve_stdio(build_server(cli_path=args.cli))
    _parser().print_help(sys.stderr)
    return 2


def _shared_daemon(args: argparse.Namespace) -> int:
    from pathlib import Path

    from claude_sidecar.frontends.daemon.place import Place, default_log_file, default_socket
    from claude_sidecar.protocol.errors import SidecarError

    place = Place(Path(args.socket) if args.socket else default_socket())
    try:
        if args.command in ("status", "stop"):
            from claude_sidecar.frontends.daemon import admin

            if args.command == "status":
                return admin.status(place)
            return admin.stop(place, force=args.force)
        if args.command == "connect":
            from claude_sidecar.frontends.daemon.bridge import bridge, reach
            from claude_sidecar.frontends.daemon.upgrade import retire_other_version

            serve_args = [
                f"--idle-close={args.idle_close:g}",
                f"--linger={args.linger:g}",
                f"--replay-window={args.replay_window:g}",
                f"--client-buffer={args.client_buffer:g}",
                f"--client-stall={args.client_stall:g}",
                f"--warm-pool={args.warm_pool}",
                f"--cli-nice={args.cli_nice}",
            ]
            if args.cli:
                serve_args.append(f"--cli={args.cli}")
            log_file = Path(args.daemon_log) if args.daemon_log else default_log_file()
            retire_other_version(place, sys.stderr)
            return bridge(reach(place, log_file, serve_args))
        from claude_sidecar.frontends.daemon.serve import Lifetime, serve_socket

        return serve_socket(
            place,
            cli_path=args.cli,
            lifetime=Lifetime(idle_close=args.idle_close, linger=args.linger),
            window_bytes=int(args.replay_window * (1 << 20)),
            warm_pool=args.warm_pool,
            send_limit=int(args.client_buffer * (1 << 20)),
            stall=args.client_stall,
        )
    except SidecarError as e:
        print(f"claude-sidecar {args.command}: {e.message}", file=sys.stderr)
        # A second daemon for the same socket is not a failure: one serves it.
        return 0 if e.NAME == "alreadyServing" else 1
    except OSError as e:
        # status/stop: the daemon went away mid-request (connect reports its own).
        print(f"claude-sidecar {args.command}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
