"""``claude-sidecar login`` / ``logout``: the CLI's own sign-in, for whichever CLI the
daemon runs.

A user of the CLI bundled with claude-agent-sdk has no ``claude`` on PATH; these commands
find the CLI as a channel would (``--cli``, ``$CLAUDE_SIDECAR_CLI``, PATH, the bundle) and
run its ``auth login`` / ``auth logout`` in this terminal, passing its exit code through.
The CLI keeps what it gets in its config home (``~/.claude``; the keychain on macOS),
where every CLI the daemon starts reads it, running chats included.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence

from claude_sidecar.cli.discovery import locate_cli
from claude_sidecar.cli.signin import API_KEY_VARIABLE
from claude_sidecar.protocol.errors import CliNotFound

API_KEY_GUIDE = f"""\
The API-key route: the CLI uses {API_KEY_VARIABLE} when it is in the environment of the
process that starts it, i.e. of the claude-sidecar daemon, i.e. of your editor.

1. Create a key at https://console.anthropic.com/settings/keys (API usage is billed to
   that Console account, not to a Claude subscription).
2. Put it where the editor's environment comes from:
   - an editor started from a terminal (Neovim, `code .`): your shell's start-up file,
       echo 'export {API_KEY_VARIABLE}=sk-ant-...' >> ~/.bashrc     (or ~/.zshrc)
   - an editor started from the desktop on Linux (VS Code, IntelliJ from the app menu):
       mkdir -p ~/.config/environment.d
       echo '{API_KEY_VARIABLE}=sk-ant-...' > ~/.config/environment.d/anthropic.conf
       chmod 600 ~/.config/environment.d/anthropic.conf
     (read by the systemd user session at login: GNOME, KDE and most desktops), then log
     out and in again. Without systemd, use ~/.profile.
   - from the desktop on macOS: `launchctl setenv {API_KEY_VARIABLE} sk-ant-...` (until
     the next restart), or start the editor from a terminal that has it.
3. Restart the editor. A shared daemon keeps the environment it was started with: stop
   it with `claude-sidecar stop` and the next editor starts one with the key.
4. Check: `claude-sidecar doctor` says `auth:     api_key from {API_KEY_VARIABLE}`.

More in claude-sidecar's docs/sign-in.md.
"""


def run_auth(
    action: str,
    options: Sequence[str] = (),
    cli_path: str | None = None,
    env: Mapping[str, str] | None = None,
) -> int:
    """Run ``<cli> auth <action> <options>`` in this terminal; its exit code (128 + the
    signal when a signal ended it), or 1 when no CLI is found."""
    env = os.environ if env is None else env
    try:
        cli, source = locate_cli(cli_path, env)
    except CliNotFound as e:
        print(f"claude-sidecar {action}: {e.message}", file=sys.stderr)
        return 1
    print(
        f"claude-sidecar {action}: running the Claude Code CLI at {cli} (found via {source})",
        file=sys.stderr,
        flush=True,
    )
    # CLAUDECODE makes the CLI refuse to run inside another Claude Code session.
    child_env = {k: v for k, v in env.items() if k != "CLAUDECODE"}
    try:
        done = subprocess.run([cli, "auth", action, *options], env=child_env, check=False)
    except OSError as e:
        print(f"claude-sidecar {action}: cannot run {cli}: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        # The CLI got the same Ctrl-C (same process group) and ended.
        return 130
    code = done.returncode
    return 128 - code if code < 0 else code
